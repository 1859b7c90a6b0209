"""What each command of a bash command line reads on stdin (:class:`StdinFeeds`): the output of the
stage before it in a pipeline, a heredoc or an input redirect written after it (bash binds it to the
last command of a list, tree-sitter to the whole list), the output of a command with a heredoc piped
on (``cat <<EOF | sh``). :mod:`paragents.permissions.shell`'s walker fills it as it meets pipelines
and redirected statements, and reads it for each command (a shell reading its program from stdin is
checked like ``sh -c``). Helpers over tree-sitter-bash nodes; nothing here touches the filesystem."""

from __future__ import annotations

import itertools

import tree_sitter as ts

from paragents.permissions.parsed import ParsedCommand
from paragents.permissions.words import Feed, heredoc_text, node_text, output_of, word


class StdinFeeds:
    """What the commands of one tree read on stdin, by command node; a heredoc whose body cannot be
    told apart from its command line sets ``out.problem``."""

    def __init__(self, out: ParsedCommand) -> None:
        self.out = out
        self.by_command: dict[int, Feed] = {}
        """Command node id -> what it reads on stdin (a pipe, a heredoc, an input redirect)."""

    def of(self, command: ts.Node) -> Feed | None:
        """What ``command`` reads on stdin, when something found so far feeds it."""
        return self.by_command.get(command.id)

    def pipeline(self, node: ts.Node) -> None:
        """Each stage of the pipeline ``node`` reads the output of the stage before it."""
        stages = [c for c in node.named_children if c.type != "comment"]
        for before, stage in itertools.pairwise(stages):
            self._feed(stage, output_of(before))

    def _feed(self, stage: ts.Node, feed: Feed) -> None:
        """Remember that ``stage`` (a command, or a redirected one) reads ``feed`` on stdin."""
        if stage.type == "redirected_statement":
            stage = stage.child_by_field_name("body") or stage
        if stage.type == "command":
            self.by_command.setdefault(stage.id, feed)

    def redirected(self, node: ts.Node) -> None:
        """A heredoc feeds its command; a pipeline written after the heredoc's start is fed the
        command's output (``cat <<EOF | sh``)."""
        body = node.child_by_field_name("body")  # (a list's last command: see _feed_redirect)
        for child in node.named_children:
            if child.type == "file_redirect" and body is not None:
                self._input_redirect(body, child)
            if child.type != "heredoc_redirect":
                continue
            feed = heredoc_text(child)
            if body is not None and feed is not None:
                self._feed_redirect(body, feed)
            for piped in child.named_children:
                if piped.type in ("pipeline", "command", "redirected_statement", "list") and "\n" in (
                    node_text(piped)
                ):  # the parser took heredoc lines for the command line (a body starting with "\")
                    self.out.problem = "a heredoc's body could not be told apart from its command line"
                output = self._heredoc_output(node, body, feed)
                if piped.type == "pipeline" and piped.named_children:
                    self._feed(piped.named_children[0], output)
                elif piped.type in ("command", "redirected_statement"):
                    self._feed(piped, output)

    @staticmethod
    def _heredoc_output(node: ts.Node, body: ts.Node | None, feed: Feed | None) -> Feed:
        """What ``node`` (a statement with a heredoc) writes to a pipe written after the heredoc's
        start: the output of its command, or of the last command of a list the parser attached the
        heredoc to (``true && cat <<EOF | sh``: ``cat`` reads the heredoc)."""
        last = body
        while last is not None and last.type in ("list", "pipeline") and last.named_children:
            last = last.named_children[-1]
        if last is None or last is body:
            return output_of(node)
        return output_of(last, feed)

    def _input_redirect(self, body: ts.Node, redirect: ts.Node) -> None:
        """``sh < <(curl x)``, ``sh < "$F"``: stdin read from something only known when it runs feeds
        the command (the last one of a pipeline); a named file does not (like ``sh FILE``)."""
        ops = [c.type for c in redirect.children if not c.is_named]
        target = redirect.child_by_field_name("destination")
        if ops[:1] != ["<"] or target is None or word(target).known:
            return
        self._feed_redirect(body, Feed(None, f"the input redirect < {node_text(target)}"))

    def _feed_redirect(self, body: ts.Node, feed: Feed) -> None:
        """A redirect written after ``body`` feeds its last command (bash binds it there; tree-sitter
        attaches it to the whole list or pipeline: ``true && sh <<EOF``), or every command of a group
        or subshell (``{ a; sh; } <<EOF``), with the text unknown: which of them reads it is not."""
        while body.type in ("list", "pipeline") and body.named_children:
            body = body.named_children[-1]  # (a comment never comes last: it would hide the redirect)
        if body.type in ("command", "redirected_statement"):
            self._feed(body, feed)
            return
        group = Feed(None, f"{feed.origin} given to a group of commands")
        pending = [body]
        while pending:
            node = pending.pop()
            if node.type == "command":
                self._feed(node, group)
            pending.extend(node.named_children)
