"""The bash snippets a remote lane (container or Pod) runs, and how their arguments are passed.

Every snippet is a fixed string run as ``bash -c SNIPPET paragents ARG...``: arguments (paths, the
command, commit ids) travel as separate argv entries, never spliced into shell text. The lane's image
needs ``bash``, ``git`` and coreutils (``head``, ``cat``, ``mkdir``, ``mv``, ``kill``)."""

from __future__ import annotations

WORKSPACE = "/workspace"
"""The lane's root inside its container or Pod."""
HOME = "/tmp"
"""``HOME`` of the lane's user (always writable; the image's user need not exist)."""
EXEC_DIR = "/tmp/.paragents-exec"
"""Where a running command's process group id is written (for timeout and cancel)."""

EXEC = r"""
d=/tmp/.paragents-exec; mkdir -p "$d" 2>/dev/null
cd -- "/workspace/$2" 2>/dev/null || { echo "no directory '$2' in the lane" >&2; exit 125; }
set -m
bash -c "$3" </dev/null 2>&1 &
echo $! > "$d/$1"
wait $!
c=$?
rm -f "$d/$1"
echo "PARAGENTS-EXIT $1 $c" >&2
exit $c
"""
"""``EXEC ID CWD COMMAND``: run COMMAND (stdout and stderr together on stdout, stdin empty) as its own
process group (``set -m``), its id written to ``EXEC_DIR/ID``; on exit print ``PARAGENTS-EXIT ID
CODE`` on stderr, so the caller knows the code even while background processes hold the output."""

STOP = r"""
f="/tmp/.paragents-exec/$1"
for _ in $(seq 1 50); do [ -s "$f" ] && break; sleep 0.05; done
p=$(cat "$f" 2>/dev/null) || exit 0
kill -TERM -- "-$p" 2>/dev/null || exit 0
for _ in $(seq 1 "$2"); do kill -0 -- "-$p" 2>/dev/null || exit 0; sleep 0.05; done
kill -KILL -- "-$p" 2>/dev/null
exit 0
"""
"""``STOP ID STEPS``: stop the process group of the running command ID as the local backend does:
SIGTERM, up to STEPS x 50 ms for the group to exit, then SIGKILL (waits up to 2.5 s for the command to
have started)."""

READ = r"""
cd /workspace || exit 2
[ -e "$1" ] || { echo "does not exist" >&2; exit 3; }
[ -d "$1" ] && { echo "is a directory" >&2; exit 4; }
[ -f "$1" ] || { echo "is not a regular file" >&2; exit 5; }
head -c "$2" -- "$1"
"""
"""``READ PATH LIMIT``: the first LIMIT bytes of the file PATH; exit 3 when PATH does not exist, 4 when
it is a directory, 5 when it is something else (:data:`READ_PROBLEMS`)."""
READ_PROBLEMS = {3: "missing", 4: "directory", 5: "other"}
"""Exit codes of :data:`READ` (and :data:`TREE`) -> :attr:`~paragents.backends.base.FileProblem.reason`."""

WRITE = r"""
cd /workspace || exit 2
mkdir -p -- "$(dirname -- "$1")" || exit 2
t="$1.paragents-$$"
head -c "$2" > "$t" && [ "$(wc -c < "$t")" -eq "$2" ] && mv -f -- "$t" "$1" || { rm -f -- "$t"; exit 2; }
"""
"""``WRITE PATH SIZE``: replace PATH with exactly SIZE bytes read from stdin (written aside, then
renamed; the size is checked, so a cut connection never leaves half a file)."""

LIST = r"""
cd /workspace || exit 2
[ -d "$1" ] || { echo "is not a directory" >&2; exit 2; }
shopt -s dotglob nullglob
for f in "$1"/*; do
  if [ -L "$f" ]; then k=l; elif [ -d "$f" ]; then k=d; elif [ -f "$f" ]; then k=f; else k=o; fi
  printf '%s %s\0' "$k" "${f##*/}"
done
"""
"""``LIST PATH``: ``KIND NAME`` NUL-terminated for each entry of PATH (f, d, l or o)."""

SKIP_DIRS = (".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
             ".pytest_cache", ".ruff_cache", ".tox")  # fmt: skip
"""Directories :data:`TREE` never descends into below its root (as ``tools.fsutil.SKIP_DIRS``)."""

TREE = r"""
cd /workspace || exit 2
[ -e "$1" ] || exit 3
[ -d "$1" ] || exit 4
cd -- "$1" || exit 2
depth=(); [ "$2" = 0 ] || depth=(-maxdepth "$2")
max=$3; skip=(); shift 3
for d in "$@"; do skip+=(-name "$d" -o); done
find . -mindepth 1 "${depth[@]}" \( -type d \( "${skip[@]}" -false \) \) -prune \
  -o -printf '%y %Y %T@ %s %P\0%l\0' | head -z -n "$((2 * max))"
"""
"""``TREE PATH DEPTH MAX SKIP...``: every entry below the lane's directory PATH (DEPTH levels, 0: all;
directories named SKIP not entered), as ``KIND TARGET_KIND MTIME SIZE NAME`` NUL ``LINK`` NUL
(find's ``%y %Y %T@ %s %P`` and ``%l``), at most MAX entries; exit 3 when PATH does not exist, 4
when it is not a directory."""

TAR = r"""
cd /workspace || exit 2
cd -- "$1" || exit 2
head -c "$3" | tar -c --null --no-recursion -T - -f - 2>/dev/null | head -c "$2"
exit 0
"""
"""``TAR PATH LIMIT LISTSIZE``: a tar archive (at most LIMIT bytes) of the files below PATH named in
the LISTSIZE bytes of stdin, NUL-separated, relative to PATH (no recursion; a name that vanished
meanwhile is left out)."""

RELAY = r"""
exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 7
exec 4<&0
cat <&4 >&3 &
w=$!
cat <&3
kill "$w" 2>/dev/null
exit 0
"""
"""``RELAY PORT``: connect to PORT on the lane's own loopback and copy stdin to it and it to stdout
until it closes (a forwarded port's one connection; bash's ``/dev/tcp``: no network needed)."""

UPLOAD = r"""
head -c "$2" > "$1" && [ "$(wc -c < "$1")" -eq "$2" ]
"""
"""``UPLOAD PATH SIZE``: write exactly SIZE bytes of stdin to the absolute PATH (a bundle in /tmp)."""

UNPACK = r"""
mkdir -p -- "$1" || exit 2
head -c "$2" | tar -x --no-same-owner -C "$1" -f -
"""
"""``UNPACK DIR SIZE``: unpack the tar archive of SIZE bytes on stdin into the absolute DIR (made when
missing), files owned by the lane's user."""

PACK = r"""
cd -- "$1" 2>/dev/null || { echo "no directory $1" >&2; exit 3; }
tar -c -f - . 2>/dev/null | head -c "$2"
exit 0
"""
"""``PACK DIR LIMIT``: a tar archive of the absolute DIR (at most LIMIT bytes: a longer one is cut, and
the caller, asking for one byte more than it accepts, drops it)."""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "paragents",
    "GIT_AUTHOR_EMAIL": "paragents@localhost",
    "GIT_COMMITTER_NAME": "paragents",
    "GIT_COMMITTER_EMAIL": "paragents@localhost",
    "GIT_TERMINAL_PROMPT": "0",
}

RESTORE = r"""
set -eu
b="$1"; branch="$2"; base="$3"; snap="$4"
cd /workspace
git init -q
git config user.name "paragents lane"
git config user.email "paragents-lane@localhost"
git fetch -q --no-tags "$b" "+$base:refs/heads/$branch"
if [ -n "$snap" ]; then
  git fetch -q --no-tags "$b" "+$snap:refs/paragents/snapshot"
  git update-ref "refs/heads/$branch" "$(git rev-parse refs/paragents/snapshot^1)"
fi
git symbolic-ref HEAD "refs/heads/$branch"
git reset -q --hard
if [ -n "$snap" ]; then
  git read-tree -u --reset refs/paragents/snapshot
  git reset -q
fi
rm -f "$b"
"""
"""``RESTORE BUNDLE BRANCH BASE_REF SNAPSHOT_REF``: make /workspace a git repository on BRANCH at the
bundle's BASE_REF; with a SNAPSHOT_REF (recreating a lane), the branch goes to the snapshot's parent
(the lane's own commits) and the files to the snapshot's tree, uncommitted as they were."""

SNAPSHOT = r"""
set -eu
known=("$@")
cd /workspace
export GIT_INDEX_FILE=/tmp/.paragents-snapshot-index
export GIT_AUTHOR_DATE='@0 +0000' GIT_COMMITTER_DATE='@0 +0000'
g() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false \
  -c i18n.commitEncoding=UTF-8 "$@"; }
g add -A >/dev/null
tree=$(g write-tree)
head=$(g rev-parse --verify -q HEAD)
commit=$(echo "paragents snapshot" | g commit-tree "$tree" -p "$head")
echo "$commit $head $tree"
for k in "${known[@]}"; do [ "$k" = "$commit" ] && exit 0; done
g update-ref refs/paragents/snapshot "$commit"
excl=()
for k in "${known[@]}"; do g cat-file -e "$k^{commit}" 2>/dev/null && excl+=("^$k"); done
g bundle create -q - refs/paragents/snapshot "${excl[@]}"
"""
"""``SNAPSHOT KNOWN...``: commit the lane's files (a private index: tracked and untracked files, not
ignored ones; fixed dates, so an unchanged tree gives the same commit) on HEAD; print ``COMMIT HEAD
TREE``; unless COMMIT is one of the KNOWN commits (the caller already has it), write a git bundle of it
to stdout, leaving out what the caller has."""

ADOPT = r"""
set -eu
b="$1"; ref="$2"; branch="$3"; expect="$4"
cd /workspace
export GIT_INDEX_FILE=/tmp/.paragents-snapshot-index
g() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false \
  -c i18n.commitEncoding=UTF-8 "$@"; }
g fetch -q --no-tags "$b" "+$ref:refs/paragents/host"
rm -f "$b"
new=$(g rev-parse --verify -q "refs/paragents/host^{commit}")
head=$(g rev-parse --verify -q "refs/paragents/host^1")
want=$(g rev-parse --verify -q "refs/paragents/host^{tree}")
g add -A >/dev/null
cur=$(g write-tree)
if [ "$cur" != "$want" ]; then
  [ "$cur" = "$expect" ] || { echo "its files changed since they were last fetched" >&2; exit 3; }
  g read-tree -u --reset "$new"
fi
g update-ref "refs/heads/$branch" "$head"
unset GIT_INDEX_FILE
g reset -q
"""
"""``ADOPT BUNDLE REF BRANCH EXPECT_TREE``: take what the host did to the lane (commits, files) from the
bundle's REF, a commit whose tree is the host's files and whose parent is the host's branch head: the
branch moves to that head, and the files become that tree, but only when the lane's files are still
EXPECT_TREE (what the host last fetched) or already that tree (exit 3 otherwise: nothing changed)."""

AGENT = r"""
exec 2>/dev/null
cd /workspace || exit 2
export GIT_INDEX_FILE=/tmp/.paragents-agent-index GIT_AUTHOR_DATE='@0 +0000' GIT_COMMITTER_DATE='@0 +0000'
g() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false \
  -c i18n.commitEncoding=UTF-8 "$@"; }
sha='^[0-9a-f]{40}([0-9a-f]{24})?$'
out=/tmp/.paragents-agent-out
last=() lasthead=
head_now() {
  head= h=
  if IFS= read -r h < .git/HEAD; then
    case $h in
      "ref: refs/heads/"*) [ -f ".git/${h#ref: }" ] && IFS= read -r head < ".git/${h#ref: }" ;;
      *) head=$h ;;
    esac
  fi
  [[ $head =~ $sha ]] || head=$(g rev-parse --verify -q HEAD) || head=
}
while IFS=' ' read -r -a w; do
  [ "${w[0]}" = SNAP ] || exit 0
  id=${w[1]} max=${w[2]} known=("${w[@]:3}")
  if ! added=$(g add -A --verbose); then echo "$id ERR git add failed"; continue; fi
  head_now
  [ -n "$head" ] || { echo "$id ERR the lane has no HEAD commit"; continue; }
  if [ -n "$added" ] || [ ${#last[@]} = 0 ] || [ "$head" != "$lasthead" ]; then
    tree=$(g write-tree) && commit=$(g commit-tree "$tree" -p "$head" -m "paragents snapshot") \
      || { last=(); echo "$id ERR git write-tree/commit-tree failed"; continue; }
    last=("$commit" "$head" "$tree") lasthead=$head
  fi
  size=0
  for k in "${known[@]}"; do [ "$k" = "${last[0]}" ] && { echo "$id ${last[*]} 0"; continue 2; }; done
  {
    printf '# v2 git bundle\n'
    for k in "${known[@]}"; do printf -- '-%s\n' "$k"; done
    printf '%s refs/paragents/snapshot\n\n' "${last[0]}"
  } > "$out" && { printf '%s\n' "${last[0]}"; printf '^%s\n' "${known[@]}"; } \
    | g pack-objects --stdout --revs --thin --delta-base-offset -q >> "$out" \
    && size=$(wc -c < "$out") || { echo "$id ERR git pack-objects failed"; continue; }
  [ "$size" -le "$max" ] || { echo "$id ERR the snapshot is $size bytes, over $max"; continue; }
  echo "$id ${last[*]} $size"
  cat "$out"
done
"""
"""``AGENT``: the lane's snapshot agent (:mod:`paragents.backends.agent`), started once per lane
with stdin open and spoken to one request at a time: ``SNAP ID MAX KNOWN...`` (a line) answers
``ID COMMIT HEAD TREE SIZE`` (a line) and SIZE bytes of a git bundle of COMMIT leaving out the KNOWN
commits (SIZE 0: COMMIT is one of them), or ``ID ERR TEXT``. COMMIT is the snapshot
:data:`SNAPSHOT` would make (same index rules, dates and message); while ``git add -A --verbose``
on its private index names nothing and HEAD did not move, the last answer is reused (one git
process for an unchanged lane)."""
