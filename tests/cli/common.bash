# Shared by the tests/cli/*.sh scripts: `source common.bash "$@"` with the arguments ctest
# passes (path of gpbzip2, path of corpus_gen). Each script runs in its own scratch folder.
#
# The central check, same_as_bzip2, prepares two identical folders, runs the real bzip2 in
# one and gpbzip2 in the other under the same name (a symlink called bzip2, bunzip2, ...,
# so that messages carry the same program name), and compares exit code, stdout, stderr
# and the files left behind.

set -u
GP=$(realpath "$1")
GEN=$(realpath "$2")
SRC=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../..")  # the source tree: README, LICENSE, man page
command -v bzip2 >/dev/null || { echo "SKIP: bzip2 not installed"; exit 77; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpbzip2-cli.XXXXXX")
trap 'chmod -R u+rwx "$WORK"; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

# gpbzip2 under every name the tests call it by.
mkdir bin
for n in bzip2 bunzip2 bzcat gpbzip2 gpbunzip2 gpbzcat; do ln -s "$GP" "bin/$n"; done
REAL_BZIP2_DIR=$(dirname "$(command -v bzip2)")

FAILS=0
fail() {
  echo "FAIL: $*" >&2
  FAILS=$((FAILS + 1))
}
expect_eq() {  # expect_eq ACTUAL EXPECTED WHAT
  [[ "$1" == "$2" ]] || fail "$3: expected [$2], got [$1]"
}
expect_match() {  # expect_match TEXT REGEX WHAT
  [[ "$1" =~ $2 ]] || fail "$3: [$1] does not match /$2/"
}
expect_file_same() {  # expect_file_same A B WHAT
  cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"
}
finish() {
  if ((FAILS > 0)); then
    echo "$FAILS check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
need() {  # need COMMAND: skip the script (77) when a tool is missing
  command -v "$1" >/dev/null || { echo "SKIP: $1 not available"; exit 77; }
}

gen() {  # gen KIND SIZE [SEED] > file
  "$GEN" "$@"
}

# What a folder holds: type, name, mode, size and content of everything in it.
tree_state() {
  (cd "$1" && find . -mindepth 1 -printf '%y %p %m %s\n' | sort &&
    find . -type f -exec md5sum {} + | sort -k2)
}

# same_as_bzip2 LABEL SETUP STDIN NAME ARGS...: SETUP (a function) fills each folder;
# NAME is bzip2, bunzip2 or bzcat; STDIN a file (or /dev/null) fed to both. With
# COMPARE_STDERR=0 (where gpbzip2's message is its own) stdout and stderr are left to the
# caller (ref.out, ref.err, gp.out, gp.err).
COMPARE_STDERR=1
RUN_AS=()  # a command prefix for both programs, e.g. to run them as another user
same_as_bzip2() {
  local label=$1 setup=$2 input=$3 name=$4
  shift 4
  chmod -R u+rwx ref gp 2>/dev/null
  rm -rf ref gp && mkdir ref gp
  (cd ref && "$setup") && (cd gp && "$setup")
  (cd ref && "${RUN_AS[@]}" "$REAL_BZIP2_DIR/$name" "$@" <"$input" >../ref.out 2>../ref.err; echo $? >../ref.rc)
  (cd gp && "${RUN_AS[@]}" "$WORK/bin/$name" "$@" <"$input" >../gp.out 2>../gp.err; echo $? >../gp.rc)
  expect_eq "$(cat gp.rc)" "$(cat ref.rc)" "$label: exit code"
  if ((COMPARE_STDERR)); then
    cmp -s gp.out ref.out || fail "$label: stdout differs from bzip2's"
    diff ref.err gp.err >/dev/null || fail "$label: stderr differs from bzip2's:
--- bzip2:
$(cat ref.err)
--- gpbzip2:
$(cat gp.err)"
  fi
  diff <(tree_state ref) <(tree_state gp) >/dev/null || fail "$label: files differ from bzip2's:
$(diff <(tree_state ref) <(tree_state gp))"
}

# run_gp ARGS...: runs gpbzip2 (as gpbzip2) with stdin from /dev/null unless redirected;
# leaves OUT (stdout file), ERR (stderr text) and RC.
run_gp() {
  "$WORK/bin/gpbzip2" "$@" >gp.out 2>gp.err
  RC=$?
  ERR=$(cat gp.err)
}
