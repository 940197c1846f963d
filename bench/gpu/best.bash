# Sourced by bench/gpu/compress.sh and decompress.sh, with work (a scratch folder) set.
# best RUNS CMD...: "seconds MB" of the fastest run and the peak RSS of that run. Output
# goes to /dev/null: writing 1.3 GB to the GPU machine's disk takes longer than
# decompressing it (measured 2.1-2.6 s against 1.2-1.4 s), and every tool would wait on
# the disk alike.
if [ -x /usr/bin/time ]; then rss="/usr/bin/time -f %M -o $work/rss"; else rss=; echo 0 >$work/rss; fi
best() {
  local runs=$1 b="" m=""
  shift
  for ((r = 0; r < runs; r++)); do
    local t0=$(date +%s.%N)
    $rss "$@" >/dev/null
    local t1=$(date +%s.%N)
    local s=$(python3 -c "print(round($t1 - $t0, 3))")
    if [ -z "$b" ] || python3 -c "import sys; sys.exit(0 if $s < $b else 1)"; then
      b=$s
      m=$(($(tail -1 $work/rss) / 1024))
    fi
  done
  echo "$b $m"
}
