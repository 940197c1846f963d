#!/usr/bin/env bash
# Compression benchmark: silesia-7 at -9, gpbzip2 and its peers in the same run.
#   bench/bench_compress.sh [path/to/gpbzip2] [runs]
# Runs are interleaved tool by tool so that background noise spreads evenly; the best
# wall time of each tool is reported, with its peak memory. gpbzip2's output is checked
# against bzip2's byte for byte.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gp=${1:-$here/../build/cli/gpbzip2}
runs=${2:-3}
corpus=${SILESIA_DIR:-$here/../../shared/corpus/silesia}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for f in dickens mr nci ooffice osdb reymont xml; do cat "$corpus/$f"; done > "$work/silesia7"
size=$(stat -c %s "$work/silesia7")

declare -a names cmds
add() { names+=("$1"); cmds+=("$2"); }
add "gpbzip2 -n1" "$gp -9 -n1"
add "gpbzip2 -n2" "$gp -9 -n2"
add "bzip2" "bzip2 -9"
for t in lbzip2 pbzip2; do command -v $t >/dev/null || { echo "$t not installed" >&2; exit 1; }; done
add "lbzip2 -n1" "lbzip2 -9 -n1"
add "lbzip2 -n2" "lbzip2 -9 -n2"
add "pbzip2 -p2" "pbzip2 -9 -p2"

declare -A best mem
for ((r = 0; r < runs; r++)); do
  for i in "${!names[@]}"; do
    /usr/bin/time -f "%e %M" -o "$work/time" ${cmds[$i]} < "$work/silesia7" > "$work/out.$i"
    read -r secs kb < "$work/time"
    n=${names[$i]}
    if [[ -z ${best[$n]:-} ]] || (( $(echo "$secs < ${best[$n]}" | bc) )); then best[$n]=$secs; fi
    if [[ -z ${mem[$n]:-} ]] || (( kb > ${mem[$n]} )); then mem[$n]=$kb; fi
  done
done
cmp -s "$work/out.0" "$work/out.2" && cmp -s "$work/out.1" "$work/out.2" \
  && identical=yes || identical=NO

mbs() { echo "scale=1; $size / 1000000 / $1" | bc; }
echo "silesia-7 ($size bytes) at -9, best of $runs, $(nproc) cores, $(date -u +%F)"
echo "gpbzip2 output identical to bzip2 -9: $identical"
printf '| %-12s | %8s | %8s | %10s | %12s |\n' tool seconds MB/s "vs lbzip2" "peak MB"
printf '|%s|%s|%s|%s|%s|\n' -------------- ---------- ---------- ------------ --------------
for n in "${names[@]}"; do
  case $n in *1) peer="lbzip2 -n1" ;; bzip2) peer="lbzip2 -n1" ;; *) peer="lbzip2 -n2" ;; esac
  ratio=$(echo "scale=2; ${best[$peer]} / ${best[$n]}" | bc)
  printf '| %-12s | %8s | %8s | %9sx | %12s |\n' "$n" "${best[$n]}" "$(mbs "${best[$n]}")" \
    "$ratio" "$(( ${mem[$n]} / 1024 ))"
done
[[ $identical == yes ]]
