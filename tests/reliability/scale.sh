# Past 4 GiB: a generated 4.5 GB stream (never stored) is compressed and decompressed
# through pipes; the result's checksum must equal the generated stream's, and the peak
# resident memory of each process stays below a bound far under the data size. Mostly
# zeros, so it runs in a few minutes on 2 cores; bzip2 also decodes the stream.
source "$(dirname "$0")/common.bash" "$@"
[ -x /usr/bin/time ] || skip "needs /usr/bin/time (Debian package time) for the memory check"

size=4500000000
limit_kb=$((512 * 1024))
mkfifo gen.fifo packed.fifo
sha256sum < gen.fifo > gen.sum &
sum_gen=$!
bzip2 -dc < packed.fifo | sha256sum > bzip2.sum &
sum_bzip2=$!
"$gen" sparse "$size" 11 | tee gen.fifo \
  | /usr/bin/time -f %M -o c.rss "$bin" -9 -c | tee packed.fifo \
  | /usr/bin/time -f %M -o d.rss "$bin" -dc | sha256sum > out.sum
st=("${PIPESTATUS[@]}")
wait "$sum_gen" "$sum_bzip2"
[ "${st[*]}" = "0 0 0 0 0 0" ] || fail "pipeline statuses ${st[*]}"
[ "$(cat out.sum)" = "$(cat gen.sum)" ] || fail "decompressed stream differs from the generated one"
[ "$(cat bzip2.sum)" = "$(cat gen.sum)" ] || fail "bzip2 decodes the stream to something else"
c_rss=$(tail -1 c.rss) d_rss=$(tail -1 d.rss)
echo "peak RSS: compress ${c_rss} KB, decompress ${d_rss} KB"
[ "$c_rss" -lt "$limit_kb" ] || fail "compression used ${c_rss} KB"
[ "$d_rss" -lt "$limit_kb" ] || fail "decompression used ${d_rss} KB"
echo "scale: OK"
