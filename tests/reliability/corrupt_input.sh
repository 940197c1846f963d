# Damaged compressed files given to -d and -t: exit 2, no output file left behind (not
# even the blocks decoded before the damage), the input kept; damage in a late block of a
# large file too. bzip2 stops at the first damaged file; a file that is not bzip2 at all
# is skipped with exit 2 and the others are still done.
# Run again with GPBZIP2_GPU=on (test reliability.corrupt_input_gpu): the same verdicts
# with the GPU decode station taking the blocks.
source "$(dirname "$0")/common.bash" "$@"
if [ "${GPBZIP2_GPU:-}" = on ]; then
  "$bin" -V 2>&1 | grep -q "Build: CUDA" || skip "CPU-only build"
  "$bin" -V 2>&1 | grep -q "GPUs: none usable" && skip "no usable GPU"
fi

"$gen" text 5000000 13 > orig
bzip2 -1 < orig > good.bz2
size=$(stat -c %s good.bz2)
head -c $((size - 100)) good.bz2 > truncated.bz2
cp good.bz2 late.bz2
# One flipped byte near the end: the first 40-odd blocks decode before the damage shows.
printf '\xff' | dd of=late.bz2 bs=1 seek=$((size - 3000)) conv=notrunc status=none
printf 'not compressed at all\n' > plain.bz2
: > empty.bz2

for f in truncated late plain empty; do
  s=$(sum "$f.bz2")
  expect_status 2 "$bin" -d "$f.bz2"
  require_intact "$f.bz2" "$s"
  require_absent "$f"
  expect_status 2 "$bin" -t "$f.bz2"
  expect_status 2 "$bin" -dc "$f.bz2" > /dev/null
done

# Not bzip2, then a good file: the good one is still decompressed.
cp good.bz2 next.bz2
expect_status 2 "$bin" -d plain.bz2 next.bz2
require_absent plain
cmp -s next orig || fail "the file after a non-bzip2 one was not decompressed"

# Trailing garbage after a complete stream is ignored with a warning, as bzip2 does.
cat good.bz2 plain.bz2 > tail.bz2
expect_status 0 "$bin" -d tail.bz2
cmp -s tail orig || fail "trailing garbage: wrong output"
echo "corrupt input: OK"
