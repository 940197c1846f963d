# Sourced by the reliability scripts (bash SCRIPT.sh GPBZIP2 CORPUS_GEN). Expectations
# are bzip2's: exit 1 for I/O errors and signals, 2 for bad compressed data; an output
# file is deleted when it could not be completed; the input is never touched then.
set -uo pipefail
bin=$(realpath "$1")
gen=$(realpath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/gpbzip2-rel.XXXXXX")
# Subshells inherit the EXIT trap; only the script itself cleans up.
main_pid=$BASHPID
cleanup() { [ "$BASHPID" = "$main_pid" ] && rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
skip() {
  echo "SKIP: $*"
  exit 77
}

# expect_status WANT CMD...: runs CMD under a time limit; its status must be WANT.
expect_status() {
  local want=$1
  shift
  timeout -k 5 120 "$@"
  local got=$?
  [ "$got" -ne 124 ] && [ "$got" -ne 137 ] || fail "timed out: $*"
  [ "$got" -eq "$want" ] || fail "exit $got, expected $want: $*"
}

sum() { sha256sum < "$1" | cut -d' ' -f1; }

# require_intact FILE SUM: the input survived, unchanged.
require_intact() {
  [ -f "$1" ] || fail "input $1 was removed"
  [ "$(sum "$1")" = "$2" ] || fail "input $1 was changed"
}
require_absent() {
  [ ! -e "$1" ] || fail "partial output $1 was left behind"
}
