#!/bin/bash
# --perturb on the GPU machine (the GPU's side of bench_perturb.sh): per input, the GPU
# sort alone without and with the flips (gpu_bench bwt, 12 lanes of 6 MiB batches, best
# of 3: MB/s of block bytes, doubling rounds per batch), then whole compression with the
# GPU (-9 --gpu=on -n16, best of 2) both ways: seconds and size. Inputs: the hard inputs
# of bench/hard_inputs.bash (SIZE bytes each, default 16 MB: three batches, too few for
# twelve lanes to run at once; 327000000 matches silesia-7x4), silesia-7x4 and a source
# tar. Carried as run.sh:
#   bench/gpu/perturb.sh CARRY TAR OUTDIR    (CARRY/bin/corpus_gen too)
set -u
here=$(cd "$(dirname "$0")" && pwd)
carry=$(realpath "$1")
tar_file=$(realpath "$2")
out=$3
mkdir -p "$out"
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gp=$carry/bin/gpbzip2 bench=$carry/bin/gpu_bench gen=$carry/bin/corpus_gen
work=/tmp/gpperturb
mkdir -p $work
size=${SIZE:-16000000} tar_size=0
source "$here/../hard_inputs.bash"
best() {  # RUNS CMD...: seconds of the fastest run; its output in $work/out
  local runs=$1 b=""
  shift
  for ((r = 0; r < runs; r++)); do
    local t0=$(date +%s.%N)
    "$@" >$work/out
    local t1=$(date +%s.%N)
    b=$(python3 -c "print(round(min($t1 - $t0, ${b:-1e9}), 3))")
  done
  echo "$b"
}
{
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "- gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader)"
  echo
  echo "| input | GPU sort MB/s | rounds (batches, min-max) | --perturb: MB/s | rounds | gpbzip2 --gpu=on s | size | --perturb: s | size |"
  echo "|---|---:|---|---:|---|---:|---:|---:|---:|"
  for name in ${INPUTS:-fibonacci repeat-100000 periodic-ab silesia-7x4 tar}; do
    in=$work/in
    case $name in
      silesia-7x4) xz -dc "$carry/silesia7.xz" >$work/s7; cat $work/s7 $work/s7 $work/s7 $work/s7 >$in ;;
      tar) cp "$tar_file" $in ;;
      *) make_input $name $in ;;
    esac
    row="| $name"
    for extra in "" perturb; do
      $bench bwt $in 9 12 3 6 $extra >$work/gpu
      row+=" | $(grep -o '= [0-9]* MB/s' $work/gpu | head -1 | tr -dc 0-9) | $(awk '/rounds,/ { r = $3 + 0; if (lo == "" || r < lo) lo = r; if (r > hi) hi = r } END { print lo "-" hi }' $work/gpu)"
    done
    for flag in "" --perturb; do
      s=$(best 2 $gp -9 -n16 --gpu=on $flag -c $in)
      row+=" | $s | $(stat -c %s $work/out)"
      bzip2 -dc $work/out | cmp -s - $in || row+=" (DOES NOT DECODE)"
    done
    echo "$row |"
  done
} | tee "$out/perturb.md"
