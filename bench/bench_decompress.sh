#!/usr/bin/env bash
# Decompression benchmark: silesia-7 (dickens mr nci ooffice osdb reymont xml, in that
# order) compressed by `bzip2 -9` and by lbzip2, decompressed by gpbzip2 at 1 and 2
# threads, bzip2, and lbzip2 -n1/-n2. Prints MB/s of output, peak memory, and speed
# ratios to lbzip2 at the same thread count and to bzip2. Best of REPEAT runs, taken in
# rounds that run every decoder once, so that a busy machine slows them alike.
#
#   bench/bench_decompress.sh [DECODER]
#
# DECODER: a command that decompresses stdin to stdout and takes -n THREADS; default
# build/bench/decompress_tool, else "build/cli/gpbzip2 -d".
# Environment: CORPUS (default ../shared/corpus/silesia), WORK (where the inputs are
# kept between runs; default /tmp/gpbzip2-bench-dec), REPEAT (default 3).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
decoder=${1:-}
if [[ -z $decoder ]]; then
  decoder=$root/build/bench/decompress_tool
  [[ -x $decoder ]] || decoder="$root/build/cli/gpbzip2 -d"
fi
corpus=${CORPUS:-$root/../shared/corpus/silesia}
work=${WORK:-/tmp/gpbzip2-bench-dec}
repeat=${REPEAT:-3}

for tool in bzip2 lbzip2 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench_decompress: $tool not found" >&2; exit 1; }
done
read -r -a decoder_cmd <<<"$decoder"
command -v "${decoder_cmd[0]}" >/dev/null || { echo "bench_decompress: decoder ${decoder_cmd[0]} not found" >&2; exit 1; }

mkdir -p "$work"
plain=$work/silesia-7
if [[ ! -s $plain ]]; then
  for f in dickens mr nci ooffice osdb reymont xml; do
    [[ -f $corpus/$f ]] || { echo "bench_decompress: $corpus/$f not found" >&2; exit 1; }
  done
  (cd "$corpus" && cat dickens mr nci ooffice osdb reymont xml) >"$plain.tmp"
  mv "$plain.tmp" "$plain"
fi
[[ -s $plain.bzip2-9.bz2 ]] || { bzip2 -9 -c <"$plain" >"$plain.tmp" && mv "$plain.tmp" "$plain.bzip2-9.bz2"; }
[[ -s $plain.lbzip2.bz2 ]] || { lbzip2 -9 -n2 -c <"$plain" >"$plain.tmp" && mv "$plain.tmp" "$plain.lbzip2.bz2"; }
size=$(stat -c %s "$plain")
sum=$(md5sum <"$plain" | cut -d' ' -f1)

# time_once NAME COMMAND...: runs COMMAND once (stdin: $input); keeps its best time in
# rate[NAME] and its largest peak memory in mem[NAME].
time_once() {
  local name=$1 s k
  shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" <"$input" >/dev/null
  read -r s k <"$work/time"
  if [[ -z ${rate[$name]:-} ]] || awk "BEGIN{exit !($s < ${rate[$name]})}"; then rate[$name]=$s; fi
  if ((k > ${mem[$name]:-0})); then mem[$name]=$k; fi
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: silesia-7, $size bytes; best of $repeat runs"
for kind in bzip2-9 lbzip2; do
  input=$plain.$kind.bz2
  echo
  echo "== made by $kind ($(stat -c %s "$input") bytes)"
  got=$("${decoder_cmd[@]}" -n 2 <"$input" | md5sum | cut -d' ' -f1)
  [[ $got == "$sum" ]] || { echo "bench_decompress: gpbzip2 output differs" >&2; exit 1; }
  declare -A rate=() mem=()
  for ((r = 0; r < repeat; r++)); do
    time_once bzip2 bzip2 -d -c
    for n in 1 2; do
      time_once lbzip2-$n lbzip2 -d -c -n$n
      time_once gpbzip2-$n "${decoder_cmd[@]}" -n $n
    done
  done
  printf '%-12s %8s %9s %10s %12s %10s\n' decoder seconds MB/s "peak KB" "vs lbzip2" "vs bzip2"
  for name in bzip2 lbzip2-1 lbzip2-2 gpbzip2-1 gpbzip2-2; do
    s=${rate[$name]}
    n=${name##*-}; [[ $name == bzip2 ]] && n=1
    awk -v name="$name" -v s="$s" -v kb="${mem[$name]}" -v size="$size" \
        -v lb="${rate[lbzip2-$n]}" -v bz="${rate[bzip2]}" \
      'BEGIN { printf "%-12s %8.2f %9.1f %10d %11.2fx %9.2fx\n", name, s, size / 1e6 / s, kb, lb / s, bz / s }'
  done
done
