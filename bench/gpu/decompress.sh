#!/bin/bash
# Decompression on the GPU machine: silesia-7x4, silesia-7x16 and a source tar, each
# compressed at -9 (by gpbzip2, whose bytes are bzip2's: checked on silesia-7), then
# decompressed (output checked once, then timed into /dev/null) in two interleaved
# rounds of best of 3 (peak RSS of the best run) by
# gpbzip2 -nN (N: one per core) with the GPU (auto, and --gpu=on), gpbzip2 --gpu=off -nN
# and lbzip2 -nN;
# pbzip2 and bzip2 once on silesia-7x4; gpbzip2 --gpu=off and lbzip2 at 1, 4 and 8
# threads on silesia-7. Built elsewhere and carried, as run.sh:
#   bench/gpu/decompress.sh CARRY TAR OUTDIR
#   CARRY/bin/gpbzip2  CARRY/lib (libdivsufsort)  CARRY/x/usr/bin/{lbzip2,pbzip2}
#   CARRY/silesia7.xz  the seven Silesia files concatenated;  TAR: the source tar
# INPUTS (default "s7x4 s7x16 tar") and SMALL=0 (no pbzip2, bzip2 or thread sweep) cut
# the run short.
work=/tmp/gpdecompress
source "$(dirname "$0")/common.bash" "$@"
bzip2 -9 -c $work/s7 >$work/s7.bz2
for f in ${INPUTS:-s7x4 s7x16 tar}; do $gp -9 -c $work/$f >$work/$f.bz2; done
$gp -9 -c $work/s7 | cmp -s - $work/s7.bz2 || { echo "gpbzip2 -9 differs from bzip2 -9" >&2; exit 1; }
{
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "- files: compressed at -9, bytes identical to bzip2 -9's"
  echo
  echo "| input | tool | seconds (best of 3, two rounds) | MB/s of output | peak RSS MB |"
  echo "|---|---|---:|---:|---:|"
  for f in ${INPUTS:-s7x4 s7x16 tar}; do
    n=$(stat -c %s $work/$f)
    for round in 1 2; do
      tools=("gpbzip2 -d -n$threads (GPU auto):$gp -d -n$threads")
      tools+=("gpbzip2 -d -n$threads --gpu=on:$gp -d -n$threads --gpu=on" "gpbzip2 -d -n$threads --gpu=off:$gp -d -n$threads --gpu=off"
              "lbzip2 -d -n$threads:$lb -d -n$threads")
      for t in "${tools[@]}"; do
        [ $round = 1 ] && { ${t#*:} -c $work/$f.bz2 | cmp -s - $work/$f || echo "| $f | ${t%%:*} | OUTPUT DIFFERS | | |"; }
        read -r s m < <(best 3 ${t#*:} -c $work/$f.bz2)
        echo "| $f | ${t%%:*} | $s | $(mbs $n $s) | $m |"
      done
    done
  done
  [ "${SMALL:-1}" = 0 ] && exit 0
  n=$(stat -c %s $work/s7x4)
  for t in "pbzip2 -d -p$threads:$pb -d -p$threads" "bzip2 -d:bzip2 -d"; do
    read -r s m < <(best 1 ${t#*:} -c $work/s7x4.bz2)
    echo "| s7x4 | ${t%%:*} | $s | $(mbs $n $s) | $m |"
  done
  n=$(stat -c %s $work/s7)
  for k in 1 4 8; do
    for t in "gpbzip2 -d -n$k --gpu=off:$gp -d -n$k --gpu=off" "lbzip2 -d -n$k:$lb -d -n$k"; do
      read -r s m < <(best 3 ${t#*:} -c $work/s7.bz2)
      echo "| s7 | ${t%%:*} | $s | $(mbs $n $s) | $m |"
    done
  done
} | tee "$out/decompress.md"
