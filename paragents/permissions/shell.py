"""Cut a bash command line into the simple commands it runs and the files it redirects to.

Parsing uses tree-sitter-bash (the grammar of github.com/tree-sitter/tree-sitter-bash); there is no
regex splitting. Every simple command is found wherever it sits: lists (``&&``, ``||``, ``;``, ``&``,
newlines), pipelines (``|``, ``|&``), subshells, brace groups, ``$(...)``, backticks (also inside double
quotes), process substitution, loops, conditionals, case, function bodies, heredocs with unquoted
delimiters, ``eval``/``bash -c``/``watch``/``flock -c`` strings (parsed recursively when literal) and
``find -exec``. Wrappers (timeout, nice, nohup, env, command, builtin, exec, time, stdbuf, xargs, sudo,
watch, setsid, ionice, flock ...) are looked through; :mod:`special` says which of them allow rules
look past and which need an exact rule. Words are rebuilt with quotes removed, so
``git commit -m 'a b'`` has the words ``git, commit, -m, a b``.
"""

from __future__ import annotations

import shlex
import threading
from functools import lru_cache

import tree_sitter as ts
import tree_sitter_bash

from paragents.permissions import env_names, options, special
from paragents.permissions import file_args as files
from paragents.permissions import known_commands as known
from paragents.permissions.feeds import StdinFeeds
from paragents.permissions.parsed import ParsedCommand, SimpleCommand, Target, resolve_arguments
from paragents.permissions.words import Feed, Word, herestring_text, node_text, word

MAX_COMMAND_CHARS = 10_000
"""Commands longer than this are not analysed (and so never auto-allowed)."""
MAX_NESTING = 6
"""How deep ``eval``/``bash -c`` strings are parsed before giving up (then never auto-allowed)."""

_OUTPUT_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_EXEMPT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


_LOCAL = threading.local()


@lru_cache(maxsize=1)
def _language() -> ts.Language:
    return ts.Language(tree_sitter_bash.language())


def _parser() -> ts.Parser:
    """Return this thread's tree-sitter bash parser (built once per thread: parsers are not thread-safe)."""
    parser: ts.Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = ts.Parser(_language())
    return parser


class _Walker:
    """Collects simple commands, redirects and cd targets from one tree (and nested strings)."""

    def __init__(self, out: ParsedCommand, depth: int, parent_forms: tuple[str, ...] = ()) -> None:
        self.out = out
        self.depth = depth
        self.parent_forms = parent_forms
        self.feeds = StdinFeeds(out)
        """What each command of the tree reads on stdin (a pipe, a heredoc, a here-string)."""
        self.feed: Feed | None = None
        """The stdin of the command being analysed."""

    def walk(self, node: ts.Node) -> None:
        kind = node.type
        if not node.is_named:
            if kind == "&":
                self.out.background = True
            return
        if kind in ("raw_string", "ansi_c_string", "comment", "heredoc_start", "heredoc_end"):
            return
        if kind in ("command", "declaration_command", "unset_command"):
            self._command(node)
            return
        if kind == "file_redirect":
            self._redirect(node)
            return
        if kind == "variable_assignment":
            self._standalone_assignment(node)
        elif kind == "pipeline":
            self.feeds.pipeline(node)
        elif kind == "redirected_statement":
            self.feeds.redirected(node)
        elif kind == "for_statement":
            self._for(node)
        for child in node.children:
            self.walk(child)

    def _for(self, node: ts.Node) -> None:
        """``for NAME in WORDS``: NAME takes each word (computed when a word expands)."""
        name = node.child_by_field_name("variable")
        if name is None:
            return
        values = self.out.variables.setdefault(node_text(name), [])
        for child in node.children_by_field_name("value"):
            found = word(child)
            values.append(found.text if found.known else None)

    def _assign(self, node: ts.Node) -> None:
        """Record ``NAME=value`` (value None when it is computed when it runs)."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        found = word(value) if value is not None else Word("", True)
        self.out.variables.setdefault(node_text(name), []).append(found.text if found.known else None)

    def _standalone_assignment(self, node: ts.Node) -> None:
        self._assign(node)
        name = node_text(node).split("=", 1)[0].rstrip("+")
        if known.dangerous_variable(name):
            self.out.commands.append(
                SimpleCommand(
                    text=node_text(node),
                    words=(),
                    layers=((),),
                    assignments=(node_text(node),),
                    environment=f"sets {name}, which changes what later commands run",
                    transparent=True,
                )
            )

    def _redirect(self, node: ts.Node) -> None:
        op = ""
        for child in node.children:
            if not child.is_named:
                op = child.type
            elif child.type not in ("file_descriptor",):
                if child.type == "process_substitution":  # > >(cmd) writes to a pipe, not a file
                    self.walk(child)
                    continue
                found = word(child)
                for sub in child.children:
                    self.walk(sub)
                if op in (">&", "<&", ">&-", "<&-") and (child.type == "number" or found.text == "-"):
                    continue
                if found.known and found.text in _EXEMPT_TARGETS:
                    continue
                target = Target(found.text if found.known else None, f"{op} {node_text(child)}")
                if op in _OUTPUT_OPS or op == ">&":
                    self.out.writes.append(target)
                if op in ("<", "<>"):
                    self.out.reads.append(target)

    def _command(self, node: ts.Node) -> None:
        assignments: list[tuple[str, bool]] = []
        words: list[Word] = []
        feed = self.feeds.of(node)
        if node.type != "command":
            words.append(Word(node_text(node.children[0]), True))
        for child in node.children:
            if child.type == "variable_assignment":
                self._assign(child)
                value = child.child_by_field_name("value")
                dynamic = value is not None and not word(value).known
                assignments.append((node_text(child), dynamic))
                if node.type != "command":
                    words.append(Word(node_text(child), not dynamic))
            elif child.type == "command_name":
                words.append(word(child.named_children[0]) if child.named_children else Word("", True))
            elif child.type == "herestring_redirect":
                feed = herestring_text(child) or feed
            elif child.is_named and not child.type.endswith("redirect"):
                words.append(word(child))
        if words and words[0].known and words[0].text == "read":  # read NAME...: values from input
            for name in words[1:]:
                if name.known and not name.text.startswith("-"):
                    self.out.variables.setdefault(name.text, []).append(None)
        self.feed = feed
        try:
            self._analyse(node_text(node), words, assignments)
        finally:
            self.feed = None
        for child in node.children:
            if child.type == "variable_assignment":
                for sub in child.children:
                    self.walk(sub)
            else:
                self.walk(child)

    def _analyse(self, text: str, words: list[Word], assignments: list[tuple[str, bool]]) -> None:
        feed, self.feed = self.feed, None
        texts = tuple(w.text for w in words)
        unknown = {w.text for w in words if not w.known}
        risky: str | None = None
        environment: str | None = None
        declaring = (
            bool(words)
            and words[0].text in ("declare", "typeset", "local", "readonly")
            and not any(w.text.startswith("-") and "x" in w.text for w in words[1:])
        )  # a shell variable, not exported: only names already exported reach commands
        for assignment, dynamic in assignments:
            name, _, value = assignment.partition("=")
            name = name.rstrip("+")
            if dynamic:
                risky = f"the value of {name} is computed when it runs"
            elif declaring and known.dangerous_variable(name):
                risky = f"sets {name}, which changes what runs"
            elif not declaring and not env_names.harmless(name, _unquoted(value)):
                environment = _environment_reason(name)
        opaque: str | None = None
        if words and not words[0].known:
            opaque = f"the command name {words[0].text!r} is only known when it runs"
        layers: list[tuple[str, ...]] = [texts]
        current = texts
        transparent = False
        through_xargs = False
        stripping = True  # still inside the stripped wrappers (allow rules match past them)
        allow_index = 0
        exact_only: str | None = None
        while current and opaque is None:
            step = known.unwrap(current)
            if step is not None:
                kind = special.wrapper_kind(current)
                stripping = stripping and kind == "stripped"
                runs = step.split_string or step.start < len(current)
                if kind == "exec" and runs and exact_only is None:  # at any depth (``xargs -0 sudo x``)
                    exact_only = f"{step.wrapper} runs another command"
                through_xargs = through_xargs or step.wrapper == "xargs"
                for assignment in step.assignments:
                    name, _, value = assignment.partition("=")
                    if assignment in unknown:
                        risky = f"the value of {name} is computed when it runs"
                    elif not env_names.harmless(name, value):
                        environment = _environment_reason(name)
                if step.split_string:
                    rest = current[step.start :] if step.join_rest else current[step.start : step.start + 1]
                    dynamic = any(w in unknown for w in rest)
                    if step.string is not None:  # env -S'STR' / --split-string=STR: STR then the words
                        dynamic = dynamic or current[step.start - 1] in unknown
                        rest = (step.string, *rest)
                    parent = self._forms(layers, allow_index, assignments, text) if exact_only else ()
                    string = " ".join(rest)
                    if step.wrapper == "env" and rest:  # env -S splits STR; the later words stay whole
                        string = " ".join((rest[0], *(shlex.quote(w) for w in rest[1:])))
                    transparent = self._nested(string, dynamic, text, parent)
                    if not transparent and exact_only is None:
                        opaque = f"{step.wrapper} runs a string {_unseen(dynamic)}"
                    break
                current = current[step.start :]
                if current:
                    layers.append(current)
                    if stripping:
                        allow_index = len(layers) - 1
                    if current[0] in unknown:
                        opaque = f"the command name {current[0]!r} is only known when it runs"
                continue
            is_shell, index = known.shell_string(current)
            if is_shell:
                if index is None:
                    if through_xargs:  # ``xargs sh -c``: the string is the first word of the input
                        opaque = f"{current[0]} runs a string xargs reads from its input"
                    break
                program = known.shell_program(current)
                if known.command_name(current) == "eval":
                    string, dynamic = " ".join(current[1:]), any(w in unknown for w in current[1:])
                else:  # --command=STR: the string is the word's value
                    inline = program.inline if program is not None else None
                    string, dynamic = inline or current[index], current[index] in unknown
                transparent = self._nested(string, dynamic, text)
                if not transparent:
                    opaque = f"{current[0]} runs a string {_unseen(dynamic)}"
            break
        effective = layers[-1]
        program = known.shell_program(effective)
        for index, init in program.inits if program is not None and opaque is None else ():
            if not self._nested(init, effective[index] in unknown, text):  # fish -C CMD runs CMD first
                opaque = f"{effective[0]} runs an init command that is only known when it runs"
        if program is not None and program.source == "file" and opaque is None and not transparent:
            script = effective[program.index or 0]
            if script in unknown:  # ``bash <(curl x)``, ``sh "$SCRIPT"``
                opaque = f"{effective[0]} runs a script {script!r} that is only known when it runs"
        if feed is not None and opaque is None and not transparent:
            sourced = (  # ``echo 'rm x' | source /dev/stdin``
                known.command_name(effective) in ("source", ".")
                and len(effective) > 1
                and effective[1] in known.STDIN_FILES
            )
            reads_program = sourced or (program is not None and program.source == "stdin")
            if reads_program or special.code_from_stdin(effective):
                what = "a program" if reads_program else "code"
                if feed.text is None:
                    opaque = f"{effective[0]} runs {what} read from {feed.origin}, only known when it runs"
                elif reads_program:
                    transparent = self._nested(feed.text, False, text)
                else:
                    self._code(effective[0], feed.text)
        if exact_only and transparent:
            transparent = False  # the wrapper itself still needs its exact rule
        actions, printed, deleted = special.find_actions(effective)
        if actions and exact_only is None:
            exact_only = f"find with {', '.join(dict.fromkeys(actions))} runs, deletes or writes files"
        glob = special.glob_may_become_option(effective, {w.text for w in words if not w.known})
        if glob is not None and risky is None:
            risky = f"its unquoted glob {glob!r} could expand to an option such as -delete"
        parent = self._forms(layers, allow_index, assignments, text) if exact_only else self.parent_forms
        outer, self.parent_forms = self.parent_forms, parent
        for nested in known.find_exec(effective):
            self._analyse(" ".join(nested), [Word(w, w not in unknown) for w in nested], [])
        self.parent_forms = outer
        for path in (*printed, *deleted):
            self.out.writes.append(Target(None if path in unknown else path, f"find {path}"))
        for code in special.interpreter_code(effective):
            if code not in unknown:
                self._code(effective[0], code)
        if effective and effective[0] in ("source", ".") and any(w in unknown for w in effective[1:]):
            opaque = "source runs a file whose name is only known when it runs"
        if effective and effective[0] in ("cd", "pushd"):
            arg = next((w for w in effective[1:] if not w.startswith("-") or w == "-"), "~")  # cd -: $OLDPWD
            self.out.cd_dirs.append(None if arg in unknown else arg)
        found_files = files.file_args(tuple(w for w in effective if not w.startswith(("<(", ">("))))
        origin = " ".join(effective[:1])
        ran = self._options(layers, found_files.writes, unknown)
        if ran is not None and risky is None:
            risky = ran
        for path in found_files.reads:
            self.out.reads.append(Target(None if path in unknown else path, f"{origin} {path}"))
        for path in found_files.writes:
            unknowable = path in unknown or through_xargs or path == "{}"
            self.out.writes.append(Target(None if unknowable else path, f"{origin} {path}"))
        if through_xargs and "\x00" in files.file_args((*effective, "\x00")).writes:
            self.out.writes.append(Target(None, f"xargs {origin} (file names come from input)"))
        if found_files.unknown_writes:
            self.out.writes.append(Target(None, found_files.unknown_writes))
        tree = files.git_tree_write(effective) if known.command_name(effective) == "git" else None
        if tree is not None:
            self.out.trees.append(Target(None if tree in unknown else tree, text.strip()))
        for path in files.recursive_reads(effective):
            self.out.recursive.append(Target(None if path in unknown else path, text.strip()))
        name = known.command_name(effective)
        if name not in files.NON_READERS:
            precise = name in files.PRECISE_FILE_COMMANDS  # only its globs: the rest are known files
            for argument in words[1:]:
                if not precise or argument.glob:
                    self._argument(argument, text.strip())
            for value in files.option_values(effective):  # grep -f FILE: read, not a known file
                self._argument(Word(value, value not in unknown), text.strip())
        if known.command_name(effective) == "git" and (end := known.git_globals_end(effective)) > 1:
            layers.append((effective[0], *effective[end:]))  # deny/ask rules see `git push` too
            if known.git_config_changes(effective) and risky is None:
                risky = "sets git configuration for this run, which can run programs (core.pager, alias.*)"
        self.out.commands.append(
            SimpleCommand(
                text=text.strip(),
                words=texts,
                layers=tuple(layers),
                assignments=tuple(a for a, _ in assignments),
                opaque=opaque,
                risky=risky,
                environment=environment,
                transparent=transparent,
                allow_index=allow_index,
                exact_only=exact_only,
                parent_forms=self.parent_forms,
            )
        )

    def _options(
        self, layers: list[tuple[str, ...]], known_writes: tuple[str, ...], unknown: set[str]
    ) -> str | None:
        """Record the files the options of the command (and of each wrapper around it: ``time -o F``,
        ``xargs -a F``) read, write or may write (:mod:`options`); return why it is risky when an
        option runs a program it names (``rg --pre=sh``), else None."""
        runs: list[str] = []
        for index, layer in enumerate(layers):
            own = layer if index == len(layers) - 1 else layer[: len(layer) - len(layers[index + 1])]
            if not options.known(own):
                continue
            found = options.option_files(own)
            origin = " ".join(own[:1])

            def known_path(path: str) -> str | None:  # a value built from an expansion is computed
                return None if path in unknown or "$" in path or "`" in path else path

            for path in found.reads:
                if path not in _EXEMPT_TARGETS and path != "-":
                    self.out.reads.append(Target(known_path(path), f"{origin} {path}"))
            for path in dict.fromkeys(found.writes):
                if path not in _EXEMPT_TARGETS and path != "-" and path not in known_writes:
                    self.out.writes.append(Target(known_path(path), f"{origin} {path}"))
            for path in dict.fromkeys(found.maybe_writes):
                if path not in _EXEMPT_TARGETS:
                    why = f"{origin} {path} (an option paragents does not know names it: judged as a write)"
                    self.out.writes.append(Target(known_path(path), why))
            if found.unknown:
                self.out.writes.append(Target(None, found.unknown))
            runs.extend(found.runs)
        if runs:
            return f"runs the program its option names ({runs[0][:80]!r})"
        return None

    def _code(self, program: str, code: str) -> None:
        """Record an interpreter's code and the path literals it names."""
        self.out.codes.append(code)
        for path in special.code_paths(code):
            self.out.mentions.append(Target(path, f"{program} code names {path!r}"))

    def _argument(self, found: Word, origin: str) -> None:
        """Record an argument word (and the value of ``--opt=value``, ``of=value``) as a possible path."""
        if found.known:
            text = found.text
            values = [] if text.startswith("-") or not text or text == "-" else [text]
            if "=" in text:
                values.append(text.split("=", 1)[1])
            values += [v[1:] for v in values if v[:1] in ("@", "<")]  # curl -d @FILE, gcc @FILE
            for value in values:
                if value and "\x00" not in value:
                    self.out.arguments.append(Target(value, origin))
        elif found.glob:
            self.out.arguments.append(Target(found.text, origin, glob=True))
        else:
            self.out.pending.append(Target(found.text, origin))
            if found.text.startswith("@"):  # curl -d @$HOME/.ssh/id_rsa
                self.out.pending.append(Target(found.text[1:], origin))

    @staticmethod
    def _forms(
        layers: list[tuple[str, ...]], index: int, assignments: list[tuple[str, bool]], text: str
    ) -> tuple[str, ...]:
        """The spellings an exact rule for this command may use: its allow layer (with and without
        assignments) and the command as written."""
        words = layers[index]
        spelled = (" ".join(words), " ".join((*(a for a, _ in assignments), *words)), text.strip())
        return tuple(dict.fromkeys(spelled))

    def _nested(self, string: str, dynamic: bool, text: str, parent: tuple[str, ...] = ()) -> bool:
        """Parse a literal ``eval``/``sh -c`` string into this result; return True when it was."""
        if dynamic:
            return False
        if self.depth >= MAX_NESTING:
            self.out.problem = f"nesting of eval/sh -c is deeper than {MAX_NESTING} in {text!r}"
            return False
        _parse_into(string, self.out, self.depth + 1, parent or self.parent_forms)
        return True


def _unseen(dynamic: bool) -> str:
    """Why a nested string was not parsed: it is computed, or nested too deep."""
    return "that is only known when it runs" if dynamic else f"nested deeper than {MAX_NESTING} levels"


def _unquoted(value: str) -> str:
    """An assignment's value as the shell gives it (``'cat'`` -> ``cat``)."""
    try:
        parts = shlex.split(value)
    except ValueError:
        return value
    return parts[0] if len(parts) == 1 else value


def _environment_reason(name: str) -> str:
    return (
        f"sets {name} for the command, which can change what it runs (its config, start-up files, "
        "programs or libraries); only locale, colour, terminal and CI variables are passed without asking"
    )


def _parse_into(command: str, out: ParsedCommand, depth: int, parent_forms: tuple[str, ...] = ()) -> None:
    if len(command) > MAX_COMMAND_CHARS:
        out.problem = f"the command is longer than {MAX_COMMAND_CHARS} characters"
        return
    tree = _parser().parse(command.encode("utf-8", "surrogateescape"))
    if tree.root_node.has_error:
        where = "a nested eval/sh -c string" if depth else "the command"
        out.problem = f"{where} could not be parsed as bash (syntax error or unsupported syntax)"
    _Walker(out, depth, parent_forms).walk(tree.root_node)


def parse_command(command: str) -> ParsedCommand:
    """Parse a bash command line; returns every simple command, redirect target and flag found.

    Never raises: a syntax error or an over-long line sets ``problem`` (what could be parsed is still
    returned, so deny rules can fire on it)."""
    out = ParsedCommand()
    if "\x00" in command:
        out.problem = "the command contains a NUL byte"
        return out
    _parse_into(command, out, 0)
    resolve_arguments(out)
    return out
