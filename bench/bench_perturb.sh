#!/usr/bin/env bash
# What --perturb does to each input, and what it costs:
#   bench/bench_perturb.sh [gpbzip2 [SIZE [RUNS [TAR_SIZE]]]]
# The hard inputs of bench_hard.sh (SIZE bytes each, default 16000000; TAR_SIZE bytes of
# the tar, default 100000000, 0: none; TAR_FILE as there), a 278,212-byte chunk repeated
# (the flips' period: the one repeat they cannot break), silesia-7 and silesia-7x4 (from
# SILESIA, default ../shared/corpus/silesia; left out where absent). INPUTS names a subset.
# Per input: perturb_depth's sums (blocks, blocks perturbed, the most GPU doubling rounds
# of any block before and after, coded size, the rule's time); the whole program's
# output size without and with --perturb, and its CPU time at -n1 --gpu=off (best of
# RUNS, default 3); whether bzip2 decodes the perturbed output. Where a GPU answers
# (gpu_bench next to perturb_depth, which needs a CUDA build), the GPU sort of each input
# both ways: rounds per batch and MB/s (gpu_bench bwt, 12 lanes of 6 MiB batches).
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
gp=$(command -v "${1:-$here/../build/cli/gpbzip2}") || { echo "bench_perturb: ${1:-} not found" >&2; exit 1; }
size=${2:-16000000}
runs=${3:-3}
tar_size=${4:-100000000}
build=$(dirname "$gp")/..
gen=${CORPUS_GEN:-$build/corpus/corpus_gen}
depth=$build/bench/perturb_depth
gpu_bench=$build/bench/gpu_bench
silesia=${SILESIA:-$here/../../shared/corpus/silesia}
unset BZIP2 BZIP  # read as options
for t in "$gen" "$depth" bzip2; do
  command -v "$t" >/dev/null || { echo "bench_perturb: $t not found" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source "$here/hard_inputs.bash"
input_names+=(repeat-278212)
input_args[repeat-278212]="repeat 1 278212"
[[ -d $silesia ]] && input_names+=(silesia-7 silesia-7x4)
selected=${INPUTS:-${input_names[*]}}

gpu=no
[[ -x $gpu_bench ]] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && gpu=yes

# CPU seconds (user + system) of gpbzip2 -9 -n1 on $in without and with --perturb, best of
# $runs each, the two interleaved; the outputs go to $work/plain.bz2 and perturbed.bz2.
cpu_seconds() {
  local r s best_plain= best_perturbed=
  for ((r = 0; r < runs; r++)); do
    for mode in plain perturbed; do
      local -a flag=()
      [[ $mode == perturbed ]] && flag=(--perturb)
      s=$( { /usr/bin/time -f '%U %S' "$gp" -9 -n1 --gpu=off "${flag[@]}" < "$in" > "$work/$mode.bz2"; } 2>&1 |
        awk '{ print $1 + $2 }')
      local -n best=best_$mode
      if [[ -z $best ]] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$s; fi
      unset -n best
    done
  done
  echo "$best_plain $best_perturbed"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f%%", 100 * (b - a) / a }'; }

echo "# --perturb at -9: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u '+%F %H:%M UTC')"
echo
echo "Rounds: the GPU's doubling rounds for the block with the most (from the longest common"
echo "prefix of neighbouring rotations, exact); size: whole stream, bytes; rule and flips: ms"
echo "per MB of block bytes; CPU: seconds of gpbzip2 -9 -n1 --gpu=off, best of $runs."
echo
echo "| input | MB | blocks | perturbed | rounds | rounds, perturbed | size | size, perturbed | cost | rule ms/MB | flips ms/MB | CPU s | CPU s, perturbed | bzip2 -d |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
gpu_rows=()
for name in $selected; do
  in=$work/input
  if [[ $name == silesia-7* ]]; then
    copies=1
    [[ $name == silesia-7x4 ]] && copies=4
    for ((c = 0; c < copies; c++)); do
      (cd "$silesia" && cat dickens mr nci ooffice osdb reymont xml)
    done > "$in"
  else
    make_input "$name" "$in"
  fi
  bytes=$(stat -c %s "$in")
  "$depth" -9 < "$in" > "$work/depth"
  read -r blocks perturbed < <(awk '/^# blocks/ { print $3, $5 }' "$work/depth")
  read -r rounds rounds_after < <(awk '/^# most rounds/ { print $4 + 0, $6 + 0 }' "$work/depth")
  read -r rule flips < <(awk '/^# rule/ { print $3, $11 }' "$work/depth")
  read -r cpu cpu_p < <(cpu_seconds)
  plain=$(stat -c %s "$work/plain.bz2")
  pert=$(stat -c %s "$work/perturbed.bz2")
  decodes=yes
  bzip2 -dc "$work/perturbed.bz2" | cmp -s - "$in" || decodes=NO
  printf '| %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "$blocks" "$perturbed" "$rounds" \
    "$rounds_after" "$plain" "$pert" "$(pct "$plain" "$pert")" "$rule" "$flips" "$cpu" "$cpu_p" \
    "$decodes"
  if [[ $gpu == yes ]]; then
    for mode in plain perturb; do
      extra=()
      [[ $mode == perturb ]] && extra=(perturb)
      "$gpu_bench" bwt "$in" 9 12 3 6 "${extra[@]}" > "$work/gpu"
      mbs=$(grep -o '[0-9]* MB/s' "$work/gpu" | head -1)
      rounds_list=$(awk '/rounds,/ { printf "%s ", $3 }' "$work/gpu")
      gpu_rows+=("| $name | $mode | $mbs | $rounds_list|")
    done
  fi
  rm -f "$in" "$work"/*.bz2
done

if [[ $gpu == yes ]]; then
  echo
  echo "## GPU sort (gpu_bench bwt, 12 lanes of 6 MiB batches, best of 3)"
  echo
  echo "| input | blocks | speed | rounds per batch |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${gpu_rows[@]}"
fi
