#!/usr/bin/env bash
# Hard inputs for the rotation sort: gpbzip2 against lbzip2, pbzip2 and bzip2 at -9.
#   bench/bench_hard.sh [gpbzip2 [SIZE [RUNS [TAR_SIZE]]]]
# SIZE: bytes of each generated input (default 16000000); RUNS: best of (default 3);
# TAR_SIZE: bytes of the tar of /usr/include and /usr/share (default 100000000, 0: none);
# TAR_FILE: take them from this file instead (e.g. a Linux source tar).
# Environment: LBZIP2_BIN, PBZIP2_BIN, BZIP2_BIN (default: from PATH), CORPUS_GEN and
# BLOCK_SORT_TIMES (default: next to gpbzip2 in its build folder), GPBZIP2_EXTRA_ARGS
# (e.g. --gpu=off), THREADS (default: nproc), INPUTS (names to run, default all).
# Per input, in one run and interleaved: gpbzip2 and lbzip2 at 1 and THREADS threads,
# pbzip2 at THREADS and bzip2 once; gpbzip2's output is checked against bzip2's. Then
# block_sort_times names the block slowest to sort (best of RUNS), and gpbzip2 -n1 and
# lbzip2 -n1 are timed on that block's input bytes alone (the issue's check: within 3x).
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
gp=$(command -v "${1:-$here/../build/cli/gpbzip2}") || { echo "bench_hard: ${1:-} not found" >&2; exit 1; }
size=${2:-16000000}
runs=${3:-3}
tar_size=${4:-100000000}
build=$(dirname "$gp")/..
gen=${CORPUS_GEN:-$build/corpus/corpus_gen}
sorter=${BLOCK_SORT_TIMES:-$build/bench/block_sort_times}
lbzip2=${LBZIP2_BIN:-lbzip2}
pbzip2=${PBZIP2_BIN:-pbzip2}
bzip2=${BZIP2_BIN:-bzip2}
# The tools take options from these (lbzip2 from LBZIP2 too): a path left there would be
# compressed in place.
unset BZIP2 BZIP LBZIP2
extra=${GPBZIP2_EXTRA_ARGS:-}
threads=${THREADS:-$(nproc)}
for t in "$gen" "$lbzip2" "$pbzip2" "$bzip2"; do
  command -v "$t" >/dev/null || { echo "bench_hard: $t not found" >&2; exit 1; }
done
[[ -x $sorter ]] || { echo "bench_hard: $sorter not found: no slowest-block check" >&2; sorter=; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source "$here/hard_inputs.bash"
selected=${INPUTS:-${input_names[*]}}

now() { date +%s.%N; }
faster() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) }'; }
# Three significant digits: the hard inputs span from 0.01x to 100x.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", a / b }'; }
mbs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", a / 1000000 / b }'; }

# Times each of names/cmds on $in, best of $runs, interleaved; the first run of each
# command writes $work/out.<i>. Commands named in once_only run in the first round only.
declare -A best
time_all() {
  best=()
  for ((r = 0; r < runs; r++)); do
    for i in "${!names[@]}"; do
      n=${names[$i]}
      [[ $r -gt 0 && " $once_only " == *" $n "* ]] && continue
      local t0 t1 s
      t0=$(now)
      ${cmds[$i]} < "$in" > "$work/out.$i"
      t1=$(now)
      s=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.6f", a - b }')
      if [[ -z ${best[$n]:-} ]] || (( $(faster "$s" "${best[$n]}") )); then best[$n]=$s; fi
    done
  done
}

echo "# Hard inputs at -9: best of $runs, $threads threads, $(nproc) cores, $(date -u '+%F %H:%M UTC')"
echo
echo "gpbzip2: $gp $extra"
declare -a summary
for name in $selected; do
  [[ " ${input_names[*]} " == *" $name "* ]] || { echo "bench_hard: unknown input $name" >&2; exit 1; }
  in=$work/input
  make_input "$name" "$in"
  bytes=$(stat -c %s "$in")
  names=("gpbzip2 -n1" "lbzip2 -n1" "bzip2")
  cmds=("$gp -9 -n1 $extra" "$lbzip2 -9 -n1" "$bzip2 -9")
  if ((threads > 1)); then
    names+=("gpbzip2 -n$threads" "lbzip2 -n$threads" "pbzip2 -p$threads")
    cmds+=("$gp -9 -n$threads $extra" "$lbzip2 -9 -n$threads" "$pbzip2 -9 -p$threads")
  fi
  once_only=bzip2
  time_all
  identical=yes
  cmp -s "$work/out.0" "$work/out.2" || identical=NO
  ((threads > 1)) && { cmp -s "$work/out.3" "$work/out.2" || identical=NO; }

  echo
  echo "## $name ($bytes bytes)"
  echo
  echo "gpbzip2 output identical to bzip2 -9: $identical"
  echo
  echo "| tool | seconds | MB/s | vs lbzip2 | vs bzip2 |"
  echo "|---|---:|---:|---:|---:|"
  for n in "${names[@]}"; do
    case $n in *-n1 | bzip2) peer="lbzip2 -n1" ;; *) peer="lbzip2 -n$threads" ;; esac
    printf '| %s | %.3f | %s | %sx | %sx |\n' "$n" "${best[$n]}" "$(mbs "$bytes" "${best[$n]}")" \
      "$(ratio "${best[$peer]}" "${best[$n]}")" "$(ratio "${best[bzip2]}" "${best[$n]}")"
  done
  row="| $name | $(mbs "$bytes" "${best[gpbzip2 -n1]}") | $(ratio "${best[lbzip2 -n1]}" "${best[gpbzip2 -n1]}")x"
  if ((threads > 1)); then
    row+=" | $(mbs "$bytes" "${best[gpbzip2 -n$threads]}") | $(ratio "${best[lbzip2 -n$threads]}" "${best[gpbzip2 -n$threads]}")x"
  else
    row+=" | | "
  fi
  row+=" | $identical"

  if [[ -n $sorter ]]; then
    read -r index offset length encoded sort_s < <("$sorter" -9 -k 1 -r "$runs" < "$in" | grep -v '^#')
    dd if="$in" of="$work/block" bs=1M iflag=skip_bytes,count_bytes skip="$offset" count="$length" \
      status=none
    in_all=$in
    in=$work/block
    names=("gpbzip2 -n1" "lbzip2 -n1")
    cmds=("$gp -9 -n1 $extra" "$lbzip2 -9 -n1")
    once_only=
    time_all
    in=$in_all
    slow=$(ratio "${best[gpbzip2 -n1]}" "${best[lbzip2 -n1]}")
    echo
    echo "Slowest block to sort: block $index (input bytes $offset..$((offset + length)), $encoded" \
      "after the first RLE), bwt_forward $sort_s s. That block alone: gpbzip2 -n1" \
      "$(printf %.3f "${best[gpbzip2 -n1]}") s, lbzip2 -n1 $(printf %.3f "${best[lbzip2 -n1]}") s:" \
      "${slow}x lbzip2's time ($( (($(faster "$slow" 3))) && echo within || echo NOT within) 3x)."
    row+=" | $index | ${slow}x"
  else
    row+=" | | "
  fi
  summary+=("$row |")
  rm -f "$in" "$work"/out.* "$work/block"
done

echo
echo "## Summary"
echo
echo "MB/s at -9; vs lbzip2: lbzip2's time over gpbzip2's at the same thread count; slowest"
echo "block: gpbzip2 -n1's time over lbzip2 -n1's on the input bytes of the block slowest to sort."
echo
echo "| input | gpbzip2 -n1 | vs lbzip2 | gpbzip2 -n$threads | vs lbzip2 | identical | slowest block | its time vs lbzip2 |"
echo "|---|---:|---:|---:|---:|---|---:|---:|"
printf '%s\n' "${summary[@]}"
