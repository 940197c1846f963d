#!/bin/bash
# The GPU machine benchmark: silesia-7x4 (dickens mr nci ooffice osdb reymont xml, in
# that order, four times; 327.7 MB) at -9 with every tool in one run, plus the GPU BWT
# alone. Built elsewhere and carried: usage  bench/gpu/run.sh CARRY OUTDIR
#   CARRY/bin/{gpbzip2,gpu_bench}  CARRY/lib (libdivsufsort)  CARRY/x/usr/bin/{lbzip2,pbzip2}
#   CARRY/silesia7.bz2         the seven files concatenated, compressed
set -u
carry=$(realpath "$1")
out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=/tmp/gpbench
mkdir -p $work
bzip2 -dc "$carry/silesia7.bz2" >$work/s7
for i in 1 2 3 4; do cat $work/s7; done >$work/s7x4
threads=$(nproc)
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu: $threads cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
  echo "input: silesia-7x4, $(stat -c %s $work/s7x4) bytes"
} >"$out/machine.txt"
cat "$out/machine.txt"

# name, runs, then the command; its output goes to $work/<name>.bz2; the best wall
# seconds of the runs to times.txt, every run's to runs.txt
: >"$out/times.txt"
: >"$out/runs.txt"
timed() {
  local name=$1 runs=$2 best=""
  shift 2
  for ((r = 0; r < runs; r++)); do
    sync
    local t0=$(date +%s.%N)
    timeout 300 "$@" >$work/$name.bz2
    local t1=$(date +%s.%N)
    local s=$(python3 -c "print($t1 - $t0)")
    echo "$name $s" >>"$out/runs.txt"
    best=$(python3 -c "print(min(x for x in [$s, ${best:-$s}]))")
  done
  echo "$name $best" | tee -a "$out/times.txt"
}
bench=$carry/bin/gpu_bench
# As the station runs it (4 lanes of 6 MiB batches), and one lane alone.
for lanes in 4 1; do $bench bwt $work/s7x4 9 $lanes 3 6 | tee -a "$out/gpu_bwt.txt"; done
# The CPU side alone (CRC and entropy coding of GPU-sorted blocks): the pipeline's ceiling.
$bench encode $work/s7x4 9 $threads | tee -a "$out/gpu_bwt.txt"
timed bzip2 1 bzip2 -9 -c $work/s7x4
timed gpbzip2_gpu 3 $carry/bin/gpbzip2 -9 -c $work/s7x4
timed gpbzip2_cpu 3 $carry/bin/gpbzip2 -9 --gpu=off -n$threads -c $work/s7x4
timed lbzip2 3 $carry/x/usr/bin/lbzip2 -9 -n$threads -c $work/s7x4
timed pbzip2 3 $carry/x/usr/bin/pbzip2 -9 -p$threads -c $work/s7x4
for t in gpbzip2_gpu gpbzip2_cpu; do
  if cmp -s $work/bzip2.bz2 $work/$t.bz2; then echo "$t identical to bzip2 -9"; else echo "$t DIFFERS from bzip2 -9"; fi
done | tee "$out/identical.txt"
python3 "$(dirname "$0")/report.py" "$out" $(stat -c %s $work/s7x4) $threads
