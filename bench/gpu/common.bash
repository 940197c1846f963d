# Sourced by bench/gpu/compress.sh and decompress.sh with their arguments (CARRY TAR OUTDIR)
# and work (a scratch folder) set: the carried tools (gp, lb, pb), the inputs s7, s7x4,
# s7x16 (silesia-7 once, 4 and 16 times) and tar in $work, the thread count threads (one
# per core), and best.
set -u
carry=$(realpath "$1")
tar=$(realpath "$2")
out=$3
mkdir -p "$out" "$work"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gp=$carry/bin/gpbzip2 lb=$carry/x/usr/bin/lbzip2 pb=$carry/x/usr/bin/pbzip2
xz -dc "$carry/silesia7.xz" >$work/s7
for i in 1 2 3 4; do cat $work/s7; done >$work/s7x4
for i in 1 2 3 4; do cat $work/s7x4; done >$work/s7x16
cp "$tar" $work/tar
threads=$(nproc)

# mbs BYTES SECONDS: MB/s, or "-" where the run failed.
mbs() { [ "$2" = FAILED ] && echo - || python3 -c "print(round($1 / $2 / 1e6))"; }

# best RUNS CMD...: "seconds MB" of the fastest run and the peak RSS of that run
# ("FAILED -" where a run exits non-zero: a failed run is no time). Output
# goes to /dev/null: writing 1.3 GB to the GPU machine's disk takes longer than
# decompressing it (measured 2.1-2.6 s against 1.2-1.4 s), and every tool would wait on
# the disk alike.
if [ -x /usr/bin/time ]; then rss="/usr/bin/time -f %M -o $work/rss"; else rss=; echo 0 >$work/rss; fi
best() {
  local runs=$1 b="" m=""
  shift
  for ((r = 0; r < runs; r++)); do
    local t0=$(date +%s.%N)
    $rss "$@" >/dev/null || { echo "FAILED -"; return; }
    local t1=$(date +%s.%N)
    local s=$(python3 -c "print(round($t1 - $t0, 3))")
    if [ -z "$b" ] || python3 -c "import sys; sys.exit(0 if $s < $b else 1)"; then
      b=$s
      m=$(($(tail -1 $work/rss) / 1024))
    fi
  done
  echo "$b $m"
}
