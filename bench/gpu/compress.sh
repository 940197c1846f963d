#!/bin/bash
# Compression on the GPU machine, -9, every tool in one run: silesia-7x4, silesia-7x16 and
# a source tar (>= 300 MB) by gpbzip2 -nN (N: one per core) with the GPU (auto, and
# --gpu=on), gpbzip2 --gpu=off -nN and lbzip2 -nN, two interleaved rounds of best of 2
# (peak RSS of the best run), output timed into /dev/null and checked once: gpbzip2's
# bytes against bzip2 -9 on silesia-7 and against --gpu=off elsewhere; then the same
# inputs from cat through a pipe, as tar -I gpbzip2 feeds it (gpbzip2 auto and lbzip2).
# Then inputs around the point where the GPU starts to pay (the first 2, 50, 80, 100 and
# 150 MB of silesia-7x4): auto against --gpu=on and --gpu=off.
# Built elsewhere and carried, as run.sh:
#   bench/gpu/compress.sh CARRY TAR OUTDIR      (TAR: the source tar)
work=/tmp/gpcompress
source "$(dirname "$0")/common.bash" "$@"
for n in 2 50 80 100 150; do head -c ${n}000000 $work/s7x4 >$work/s${n}m; done
bzip2 -9 -c $work/s7 | cmp -s - <($gp -9 -c $work/s7) || echo "gpbzip2 -9 DIFFERS from bzip2 -9 on silesia-7"
row() {  # INPUT LABEL RUNS CMD...
  local f=$1 label=$2 runs=$3 n
  shift 3
  n=$(stat -c %s $work/$f)
  read -r s m < <(best $runs "$@" -c $work/$f)
  echo "| $f | $label | $s | $(mbs $n $s) | $m |"
}
pipe_row() {  # INPUT LABEL RUNS CMD: CMD (one string) reads INPUT from cat
  local f=$1 label=$2 runs=$3 cmd=$4 n
  n=$(stat -c %s $work/$f)
  read -r s m < <(best $runs bash -c "cat $work/$f | $cmd -c")
  echo "| $f | $label | $s | $(mbs $n $s) | $m |"
}
{
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "- gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null)"
  echo
  echo "| input | tool (-9) | seconds (best of 2, two rounds) | MB/s of input | peak RSS MB |"
  echo "|---|---|---:|---:|---:|"
  for f in ${INPUTS:-s7x4 s7x16 tar}; do
    $gp -9 --gpu=off -c $work/$f >$work/ref.bz2
    for m in auto on; do
      $gp -9 --gpu=$m -c $work/$f | cmp -s - $work/ref.bz2 || echo "| $f | gpbzip2 --gpu=$m | OUTPUT DIFFERS | | |"
    done
    for round in 1 2; do
      row $f "gpbzip2 -n$threads (GPU auto)" 2 $gp -9 -n$threads
      row $f "gpbzip2 -n$threads --gpu=on" 2 $gp -9 -n$threads --gpu=on
      row $f "gpbzip2 -n$threads --gpu=off" 2 $gp -9 -n$threads --gpu=off
      row $f "lbzip2 -n$threads" 2 $lb -9 -n$threads
    done
    cat $work/$f | $gp -9 -c | cmp -s - $work/ref.bz2 ||
      echo "| $f | cat \| gpbzip2 | OUTPUT DIFFERS | | |"
    for round in 1 2; do
      pipe_row $f "cat \| gpbzip2 -n$threads (GPU auto)" 2 "$gp -9 -n$threads"
      pipe_row $f "cat \| lbzip2 -n$threads" 2 "$lb -9 -n$threads"
    done
  done
  for f in s2m s50m s80m s100m s150m; do
    for round in 1 2; do
      row $f "gpbzip2 -n$threads (GPU auto)" 2 $gp -9 -n$threads
      row $f "gpbzip2 -n$threads --gpu=on" 2 $gp -9 -n$threads --gpu=on
      row $f "gpbzip2 -n$threads --gpu=off" 2 $gp -9 -n$threads --gpu=off
    done
  done
} | tee "$out/compress.md"
