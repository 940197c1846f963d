# Inputs that end just before, on and just after a block boundary, at every level: the
# compressed bytes equal bzip2's and decompress back to the input. Random bytes almost
# never hold runs of 4, so their run-length size is their size and the first boundary
# falls at the level's limit, 100000 * level - 19 bytes.
source "$(dirname "$0")/common.bash" "$@"

check() {
  local level=$1 file=$2
  "$bin" -"$level" -c "$file" > got.bz2 || fail "-$level $file: exit $?"
  bzip2 -"$level" -c "$file" > ref.bz2
  cmp -s got.bz2 ref.bz2 || fail "-$level $file: compressed bytes differ from bzip2's"
  "$bin" -dc got.bz2 > back || fail "-d of -$level $file: exit $?"
  cmp -s back "$file" || fail "-$level $file: round trip differs"
}

: > empty
printf x > one
check 9 empty
check 1 one
for level in 1 2 3 4 5 6 7 8 9; do
  limit=$((100000 * level - 19))
  for size in $((limit - 1)) $limit $((limit + 1)) $((2 * limit)) $((2 * limit + 1)); do
    "$gen" random "$size" "$level" > "r$size"
    check "$level" "r$size"
    rm "r$size"
  done
done
# Runs move the boundary: a run of equal bytes closes the block in mid-run.
for delta in -600 -5 -1 0 1 5 600; do
  "$gen" runs $((3 * 99981 + delta)) 3 > runs
  check 1 runs
done
echo "block boundaries: OK"
