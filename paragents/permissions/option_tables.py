"""The option tables of well-known commands (:mod:`paragents.permissions.options` reads them): which
options write a file, read one, run a program, take another value, or take none. From the commands'
manuals (GNU coreutils, tar, grep, curl, wget, ripgrep, gcc, openssl) and, for git's diff and log
family, ``git diff --git-completion-helper`` plus the revision options of ``git log``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Spec:
    """What a command's options do: each set holds option spellings (``-o``, ``--output``, ``-out``)."""

    writes: frozenset[str] = frozenset()
    """Options whose value is a file (or directory) the command writes."""
    reads: frozenset[str] = frozenset()
    """Options whose value is a file the command reads."""
    runs: frozenset[str] = frozenset()
    """Options whose value is a program or command line the command runs."""
    values: frozenset[str] = frozenset()
    """Other options that take a value (a number, a pattern, a format): not files."""
    flags: frozenset[str] = frozenset()
    """Options that take no value (only needed where ``complete`` is set, and for short clusters)."""
    complete: bool = False
    """Every option of the command is listed: a path-like word after an unknown long option is
    judged as that option's value (a possible write)."""
    optional: frozenset[str] = frozenset()
    """Long options whose value is only ever given with ``=`` (``--color[=WHEN]``)."""

    @cached_property
    def takes_value(self) -> frozenset[str]:
        """Every option that takes a value."""
        return self.writes | self.reads | self.runs | self.values


def spec(
    w: str = "", r: str = "", x: str = "", v: str = "", f: str = "", *, complete: bool = False, o: str = ""
) -> Spec:
    """A :class:`Spec` from space-separated option lists (writes, reads, runs, values, flags, optional)."""
    return Spec(
        frozenset(w.split()), frozenset(r.split()), frozenset(x.split()), frozenset(v.split()),
        frozenset(f.split()), complete, frozenset(o.split()),
    )  # fmt: skip


DIFF_FLAGS = (
    "--patch --no-patch --raw --patch-with-raw --patch-with-stat --numstat --shortstat --cumulative "
    "--dirstat-by-file --check --summary --name-only --name-status --compact-summary --binary "
    "--full-index --no-prefix --break-rewrites --find-renames --irreversible-delete --find-copies "
    "--find-copies-harder --no-renames --rename-empty --follow --minimal --ignore-all-space "
    "--ignore-space-change --ignore-space-at-eol --ignore-cr-at-eol --ignore-blank-lines "
    "--indent-heuristic --patience --histogram --word-diff --color-words --relative --text --exit-code "
    "--quiet --ext-diff --textconv --ignore-submodules --submodule --ita-invisible-in-index "
    "--ita-visible-in-index --pickaxe-all --pickaxe-regex --function-context --cached --staged "
    "--merge-base --no-index --stat --dirstat --abbrev --color --color-moved --unified "
    "-p -u -s -z -R -a -b -w -W -D -B -M -C -t -c -r --cc --combined-all-paths --no-ext-diff "
    "-1 -2 -3 -0 --base --ours --theirs --full-diff --dd --remerge-diff --diff-merges --no-diff-merges "
    "--first-parent --stdin --root --always --pretty"
)
REV_FLAGS = (
    "--oneline --graph --all --branches --tags --remotes --decorate --no-decorate --source --use-mailmap "
    "--mailmap --no-mailmap --clear-decorations --follow --reverse --merges --no-merges --boundary "
    "--left-right --left-only --right-only --cherry --cherry-mark --cherry-pick --ancestry-path "
    "--simplify-by-decoration --full-history --dense --sparse --simplify-merges --show-pulls "
    "--topo-order --date-order --author-date-order --no-walk --do-walk --children --parents "
    "--show-signature --notes --no-notes --show-notes --standard-notes --no-standard-notes --log-size "
    "--expand-tabs --no-expand-tabs --relative-date --abbrev-commit --no-abbrev-commit --no-abbrev "
    "--invert-grep --all-match --regexp-ignore-case --extended-regexp --fixed-strings --perl-regexp "
    "--basic-regexp --remove-empty --bisect --not --single-worktree --reflog --alternate-refs "
    "--indexed-objects --walk-reflogs --show-linear-break --objects --objects-edge --no-min-parents "
    "--no-max-parents --count --ignore-missing --in-commit-order --no-color --no-relative --no-textconv "
    "--no-renames --no-follow --no-abbrev --no-walk --linear --exclude-first-parent-only --keep-subject "
    "--numbered --signoff --stdout --cover-letter --numbered-files --rfc --zero-commit "
    "--ignore-if-in-upstream --no-stat --from --attach --inline --thread --progress "
    "--force-in-body-from --no-binary --no-numbered --no-signature --no-cover-letter -g -i -E -F -P -m "
    "-q -k -n"
)
DIFF = spec(
    w="--output -o --output-directory",
    r="-O --orderfile --signature-file --in-reply-to-file",
    v="--stat-width --stat-name-width --stat-graph-width --stat-count --ws-error-highlight --src-prefix "
    "--dst-prefix --line-prefix --inter-hunk-context --output-indicator-new --output-indicator-old "
    "--output-indicator-context --ignore-matching-lines --diff-algorithm --anchored --word-diff-regex "
    "--color-moved-ws --rotate-to --skip-to --find-object --diff-filter -U -l -S -G -I -X "
    "--format --encoding --date --since --after --until --before --author --committer --grep "
    "--grep-reflog --max-count --skip --min-parents --max-parents --exclude --glob --decorate-refs "
    "--decorate-refs-exclude --notes --show-notes --since-as-filter --max-age --min-age -L -n "
    "--suffix --start-number --reroll-count --filename-max-length --cover-from-description "
    "--subject-prefix --add-header --to --cc --in-reply-to --signature --base --interdiff --range-diff "
    "--creation-factor --exclude-hidden -v",
    f=DIFF_FLAGS + " " + REV_FLAGS,
    complete=True,
    o="--color --stat --dirstat --abbrev --unified --find-renames --find-copies --break-rewrites "
    "--word-diff --submodule --ignore-submodules --color-moved --relative --decorate --notes --pretty",
)
"""git's diff and log family (diff, log, show, format-patch, range-diff, diff-tree ...): options from
``git diff --git-completion-helper`` and the revision options of ``git log``."""
DIFF_FAMILY = frozenset(
    {"diff", "log", "show", "whatchanged", "diff-tree", "diff-index", "diff-files", "range-diff",
     "format-patch", "shortlog", "reflog", "rev-list", "cherry", "log-tree"}
)  # fmt: skip
PATHSPEC_FILE = "--pathspec-from-file"
GIT: dict[str, Spec] = {
    "archive": spec(
        w="--output -o", x="--exec", v="--format --prefix --remote --add-file --add-virtual-file"
    ),
    "bundle": spec(v="--version"),
    "fast-export": spec(w="--export-marks", r="--import-marks --import-marks-if-exists --anonymize-map"),
    "fast-import": spec(w="--export-marks", r="--import-marks --import-marks-if-exists"),
    "checkout-index": spec(w="--prefix"),
    "read-tree": spec(w="--index-output --prefix", v="--exclude-per-directory"),
    "worktree": spec(v="-b -B --reason --expire"),
    "clone": spec(w="--separate-git-dir", r="--template --reference --reference-if-able",
                  x="--upload-pack -u", v="-o --origin -b --branch --depth --shallow-since --shallow-exclude "
                  "-c --config --server-option --filter --bundle-uri -j --jobs --ref-format"),
    "init": spec(w="--separate-git-dir", r="--template", v="-b --initial-branch --object-format --shared "
                 "--ref-format"),
    "commit": spec(r=f"-F --file -t --template {PATHSPEC_FILE} -C --reuse-message -c --reedit-message",
                   v="-m --message --author --date --cleanup --fixup --squash -u --untracked-files "
                   "--trailer -S --gpg-sign"),
    "tag": spec(r="-F --file", v="-m --message -u --local-user --cleanup --sort --format --contains "
                "--no-contains --merged --no-merged --points-at -n --color --column --trailer"),
    "notes": spec(r="-F --file", v="-m --message -C --reuse-message -c --reedit-message --ref --separator"),
    "merge": spec(r="-F --file", v="-m --message -s --strategy -X --strategy-option --cleanup -S "
                  "--gpg-sign --into-name"),
    "blame": spec(r="--contents -S --ignore-revs-file", v="-L --ignore-rev --date --abbrev -C -M "
                  "--color-by-age"),
    "apply": spec(v="--directory -p -C --whitespace --exclude --include --build-fake-ancestor"),
    "am": spec(v="--directory -p -C --whitespace --exclude --include --patch-format --resolvemsg "
               "--quoted-cr --empty -S --gpg-sign"),
    "grep": spec(r="-f", x="-O --open-files-in-pager", v="-e --max-depth --context --before-context "
                 "--after-context --threads --max-count -A -B -C -m --color"),
    "difftool": spec(x="-x --extcmd -t --tool", v="--tool-help"),
    "mergetool": spec(x="-t --tool"),
    "rebase": spec(x="-x --exec", v="--onto -s --strategy -X --strategy-option --empty -C "
                   "--whitespace -S --gpg-sign --rebase-merges --update-refs"),
    "send-email": spec(r="--compose-encode", x="--sendmail-cmd --smtp-server --to-cmd --cc-cmd "
                       "--header-cmd --smtp-server-option", v="--from --to --cc --bcc --subject "
                       "--in-reply-to --smtp-user --smtp-pass --smtp-encryption --smtp-domain "
                       "--smtp-server-port --identity --confirm --transfer-encoding --8bit-encoding"),
    "fetch": spec(x="--upload-pack", v="--depth --deepen --shallow-since --shallow-exclude -j --jobs "
                  "--recurse-submodules --refmap -o --server-option --filter --negotiation-tip"),
    "pull": spec(x="--upload-pack", v="--depth --deepen --shallow-since --shallow-exclude -j --jobs "
                 "--recurse-submodules --refmap -o --server-option -s --strategy -X --strategy-option "
                 "--rebase"),
    "push": spec(x="--receive-pack --exec", v="-o --push-option --repo --recurse-submodules "
                 "--force-with-lease --signed"),
    "ls-remote": spec(x="--upload-pack", v="--sort -o --server-option"),
    "submodule": spec(v="--reference -b --branch --name --depth"),
    "bisect": spec(),
    "filter-branch": spec(x="--env-filter --tree-filter --index-filter --parent-filter --msg-filter "
                          "--commit-filter --tag-name-filter", w="-d --original",
                          v="--subdirectory-filter --setup --prune-empty"),
    "add": spec(r=PATHSPEC_FILE, v="--chmod"),
    "checkout": spec(r=PATHSPEC_FILE, v="-b -B --orphan --conflict"),
    "reset": spec(r=PATHSPEC_FILE),
    "restore": spec(r=PATHSPEC_FILE, v="-s --source --conflict"),
    "rm": spec(r=PATHSPEC_FILE),
    "stash": spec(r=PATHSPEC_FILE, v="-m --message"),
    "status": spec(v="-u --untracked-files --ignore-submodules --ignored --column --find-renames"),
    "hash-object": spec(v="-t --path"),
    "update-index": spec(v="--cacheinfo --chmod"),
    "mktag": spec(),
    "var": spec(),
}  # fmt: skip
"""git subcommands with options that write, read or run (``git config`` is :mod:`file_args`')."""
GIT_RUN_SUBCOMMANDS = {
    "bisect": "run",
    "submodule": "foreach",
}
"""``git bisect run CMD`` / ``git submodule foreach CMD``: the words after run the command."""

CURL_DATA = frozenset({"-d", "--data", "--data-ascii", "--data-binary", "--data-urlencode", "--json"})
TABLES: dict[str, Spec] = {
    "sort": spec(w="-o --output -T --temporary-directory", r="--files0-from", x="--compress-program",
                 v="-k --key -t --field-separator -S --buffer-size --parallel --batch-size --sort "
                 "--random-source",
                 f="-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z --ignore-leading-blanks "
                 "--dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting "
                 "--month-sort --human-numeric-sort --numeric-sort --random-sort --reverse "
                 "--version-sort --check --merge --stable --unique --zero-terminated --debug --help "
                 "--version", complete=True),
    "wc": spec(r="--files0-from", v="--total", f="-c -m -l -L -w --bytes --chars --lines "
               "--max-line-length --words --help --version", complete=True),
    "du": spec(r="--files0-from -X --exclude-from", v="-B --block-size -d --max-depth -t --threshold "
               "--time --time-style --exclude"),
    "uniq": spec(v="-f --skip-fields -s --skip-chars -w --check-chars --group --all-repeated",
                 f="-c -d -D -i -u -z --count --repeated --ignore-case --unique --zero-terminated",
                 complete=True),
    "split": spec(r="--filter", v="-a --suffix-length --additional-suffix -b --bytes -C --line-bytes "
                  "-l --lines -n --number -t --separator --numeric-suffixes --hex-suffixes"),
    "csplit": spec(w="-f --prefix", v="-b --suffix-format -n --digits"),
    "tar": spec(r="-T --files-from -X --exclude-from", x="-I --use-compress-program --to-command "
                "--info-script --new-volume-script -F --rsh-command --rmt-command",
                w="-g --listed-incremental --index-file", v="-b --blocking-factor -C --directory "
                "--exclude --format -H --owner --group --mode --mtime -N --newer --after-date "
                "--strip-components --transform --xform --checkpoint --checkpoint-action --occurrence "
                "-V --label --exclude-tag --exclude-tag-all --exclude-tag-under --record-size "
                "--tape-length -L --level --suffix --backup --quoting-style --warning --sort "
                "--hole-detection --atime-preserve --one-top-level --numeric-owner --pax-option "
                "--xattrs-include --xattrs-exclude -K --starting-file --volno-file -f --file"),
    "zip": spec(w="-O --output-file -b --temp-path", x="-TT --unzip-command", v="-n --suffixes -t "
                "--from-date -tt --before-date -x --exclude -i --include -P --password -Z "
                "--compression-method -s --split-size -sp -sb -sv -Y --sf -fz -e -la -lf -li -lu -ll"),
    "unzip": spec(w="-d", v="-P -x"),
    "curl": spec(w="-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr "
                 "--libcurl --etag-save --hsts --alt-svc --output-dir --create-dirs --trace-config",
                 r="-T --upload-file --cacert --capath --cert --key -E --crlfile --netrc-file "
                 "--pinnedpubkey --proxy-cacert --proxy-cert --proxy-key --etag-compare --ech "
                 "--variable --unix-socket --abstract-unix-socket",
                 v="-d --data --data-ascii --data-binary --data-urlencode --json --data-raw -F --form "
                 "--form-string -b --cookie -H --header -A --user-agent -e --referer -u --user -X "
                 "--request -x --proxy -U --proxy-user -m --max-time --connect-timeout -w --write-out "
                 "-r --range -C --continue-at -z --time-cond --retry --retry-delay --retry-max-time "
                 "--resolve --connect-to --limit-rate -Y -y --speed-limit --speed-time --max-filesize "
                 "--url --proto --proto-redir --ciphers --tls-max --interface --dns-servers "
                 "--local-port --max-redirs --oauth2-bearer --preproxy --request-target --noproxy "
                 "--happy-eyeballs-timeout-ms --parallel-max --rate --expect100-timeout "
                 "--keepalive-time --mail-from --mail-rcpt --mail-auth --cert-type --key-type --pass "
                 "-Q --quote --sasl-authzid --service-name --aws-sigv4 --hostpubmd5 --hostpubsha256 "
                 "--socks5 --socks4 --socks4a --socks5-hostname --proxy-header --tlsuser --tlspassword "
                 "--url-query --ipfs-gateway"),
    "wget": spec(w="-O --output-document -o --output-file -a --append-output -P --directory-prefix "
                 "--save-cookies --warc-file --rejected-log --save-headers",
                 r="-i --input-file --load-cookies --post-file --body-file --config --ca-certificate "
                 "--certificate --private-key --ca-directory --crl-file --warc-cdx",
                 x="--use-askpass",
                 v="-t --tries -T --timeout -w --wait --limit-rate -Q --quota -U --user-agent --header "
                 "--user --password --post-data --body-data --method -l --level -A --accept -R --reject "
                 "-D --domains --exclude-domains -I --include-directories -X --exclude-directories "
                 "--referer -e --execute --bind-address --dns-timeout --connect-timeout --read-timeout "
                 "--waitretry --restrict-file-names --https-only --secure-protocol --progress "
                 "--default-page --cut-dirs --max-redirect --retry-on-http-error --local-encoding "
                 "--remote-encoding --http-user --http-password --proxy-user --proxy-password "
                 "--ftp-user --ftp-password --regex-type --accept-regex --reject-regex -B --base "
                 "--report-speed -np"),
    "time": spec(w="-o --output", v="-f --format"),
    "strace": spec(w="-o --output", r="-E", v="-e -p -s -u -P -a -b -I -O -S -X"),
    "ltrace": spec(w="-o --output", v="-e -p -s -u -a -n -A -D -F -l -L -x"),
    "xargs": spec(r="-a --arg-file", v="-I -n -P -L -d -E -s --max-args --max-procs --delimiter -i "
                  "--replace --max-lines --eof --max-chars --process-slot-var"),
    "gcc": spec(w="-o -MF --output", r="-include -imacros -specs --specs -T", x="-wrapper "
                "-fplugin -B", v="-x -std -O -W -D -U -I -L -l -isystem -iquote -idirafter -march "
                "-mtune -e -u -MT -MQ -Xlinker -Xassembler -Xpreprocessor"),
    "iconv": spec(w="-o --output", v="-f --from-code -t --to-code"),
    "sdiff": spec(w="-o --output", v="-I --ignore-matching-lines -w --width --tabsize --diff-program"),
    "diff": spec(r="--from-file --to-file -X --exclude-from", x="--diff-program", v="-I "
                 "--ignore-matching-lines -x --exclude -F --show-function-line --label -L -U -C "
                 "--unified --context -W --width --tabsize --line-format --old-line-format "
                 "--new-line-format --unchanged-line-format --old-group-format --new-group-format "
                 "--unchanged-group-format --changed-group-format --horizon-lines -S --starting-file "
                 "--color --palette"),
    "grep": spec(r="-f --file --exclude-from", v="-e --regexp -m --max-count -A -B -C --context "
                 "--after-context --before-context --include --exclude --exclude-dir --color "
                 "--colour --label -d --directories -D --devices --binary-files --group-separator"),
    "rg": spec(r="-f --file --ignore-file", x="--pre --hostname-bin",
               v="-e --regexp -g --glob --iglob -t --type -T --type-not --type-add --type-clear -m "
               "--max-count -A -B -C --context --after-context --before-context -j --threads -M "
               "--max-columns -r --replace -E --encoding --max-depth -d --sort --sortr --color "
               "--colors --path-separator --max-filesize --dfa-size-limit --regex-size-limit "
               "--engine --field-context-separator --field-match-separator --context-separator "
               "--hyperlink-format --pre-glob --generate --sort-files"),
    "sed": spec(r="-f --file", v="-e --expression -l --line-length", o="--in-place -i"),
    "awk": spec(r="-f --file -i --include -l --load", v="-v --assign -F --field-separator -E --exec "
                "-W"),
    "jq": spec(r="-f --from-file -L", v="--arg --argjson --indent --tab --seq --args --jsonargs"),
    "openssl": spec(w="-out -keyout -signkey", r="-in -inkey -config -CAfile -key -cert -certfile "
                    "-passin", x="-engine", v="-passout -subj -days -newkey -nodes -sha256 -aes256"),
    "ls": spec(v="--hide -I --ignore --format --sort --time --color --block-size --width -w --tabsize "
               "-T --quoting-style --indicator-style --time-style --hyperlink"),
    "cat": spec(),
    "head": spec(v="-n -c --lines --bytes"),
    "tail": spec(v="-n -c --lines --bytes -s --sleep-interval --pid --max-unchanged-stats"),
    "cp": spec(r="--reference", v="-t --target-directory -S --suffix --backup --sparse --reflink "
               "--preserve --no-preserve --update --context"),
    "mv": spec(v="-t --target-directory -S --suffix --backup --update --context"),
    "ln": spec(v="-t --target-directory -S --suffix --backup"),
    "install": spec(v="-t --target-directory -S --suffix --backup -m --mode -o --owner -g --group "
                    "--strip-program --context"),
    "touch": spec(r="-r --reference", v="-d --date -t --time"),
    "truncate": spec(r="-r --reference", v="-s --size"),
    "chmod": spec(r="--reference"),
    "chown": spec(r="--reference"),
    "chgrp": spec(r="--reference"),
    "rsync": spec(w="--log-file --write-batch --only-write-batch --backup-dir --temp-dir -T "
                  "--partial-dir", r="--files-from --exclude-from --include-from --password-file "
                  "--read-batch --early-input --compare-dest --copy-dest --link-dest", x="-e --rsh "
                  "--rsync-path", v="-f --filter --exclude --include --suffix --chmod --chown --port "
                  "--address --timeout -M --remote-option --max-size --min-size --max-delete "
                  "--bwlimit --compress-level --compress-choice --checksum-choice --skip-compress "
                  "--modify-window --info --debug --log-file-format --out-format --usermap --groupmap "
                  "--iconv --contimeout --sockopts --block-size -B --protocol --outbuf --stop-after "
                  "--stop-at --checksum-seed"),
    "script": spec(w="-O --log-out -I --log-in -B --log-io -T --log-timing", v="-E --echo "
                   "-o --output-limit -m --logging-format -c --command"),
    "xxd": spec(v="-c -cols -g -groupsize -l -len -s -seek -o -offset -n -name"),
    "yq": spec(r="--from-file", v="-o --output-format -p --input-format -I --indent"),
}  # fmt: skip
for _name, _same in (("cc", "gcc"), ("g++", "gcc"), ("c++", "gcc"), ("clang", "gcc"), ("clang++", "gcc"),
                     ("gawk", "awk"), ("mawk", "awk"), ("nawk", "awk"), ("egrep", "grep"), ("fgrep", "grep"),
                     ("bsdtar", "tar"), ("gtar", "tar")):  # fmt: skip
    TABLES[_name] = TABLES[_same]
COMPRESSORS = frozenset({"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma",
                          "unlzma", "compress", "uncompress"})  # fmt: skip
