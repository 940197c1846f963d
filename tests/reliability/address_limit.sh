# Under an address-space limit (ulimit -v, as batch schedulers and some shared hosts set):
# bzip2 runs in a few MB, so a small file or two threads must work here too; a thread
# count the limit cannot hold runs with the threads it can have; a limit too small for
# one fails as bzip2 does when memory runs out (exit 1, "couldn't allocate enough
# memory", no partial output, the input kept), never by a signal. Skipped where the
# binary cannot start under a limit at all (sanitizer builds map terabytes of shadow
# memory).
source "$(dirname "$0")/common.bash" "$@"

limited() {  # KB CMD...: CMD under an address-space limit of KB
  local kb=$1
  shift
  (ulimit -v "$kb" && exec "$@")
}
limited 100000 "$bin" --help > /dev/null 2>&1 || skip "$bin cannot start under ulimit -v"

"$gen" text 1000 3 > small
bzip2 -9 < small > small.bz2
limited 100000 "$bin" -9 -c small > out.bz2 || fail "1 kB file: compression failed under 100 MB"
cmp -s out.bz2 small.bz2 || fail "1 kB file: output differs from bzip2's"
limited 100000 "$bin" -dc small.bz2 > out || fail "1 kB file: decompression failed under 100 MB"
cmp -s out small || fail "1 kB file: decompressed output differs"

"$gen" text 3000000 5 > in
bzip2 -1 < in > ref.bz2
s_in=$(sum in)
limited 150000 "$bin" -1 -n2 -c in > out.bz2 || fail "-n2 compression failed under 150 MB"
cmp -s out.bz2 ref.bz2 || fail "-n2 under 150 MB: output differs from bzip2's"
limited 150000 "$bin" -d -n2 -c ref.bz2 > out || fail "-n2 decompression failed under 150 MB"
cmp -s out in || fail "-n2 under 150 MB: decompressed output differs"

# More threads than the limit holds (64 stacks of 8 MiB alone pass 300 MB): the run
# takes the stations that fit, whatever -n asks. A 20 MB file is 23 blocks at -9, over
# 17 MB compressed (the size from which a CPU-only build once reserved room for a GPU's
# blocks), and needs about 16 MB and 8 more a station: 64 MB holds a few.
"$gen" text 20000000 6 > big
bzip2 -9 < big > big_ref.bz2
s_big=$(sum big)
for limit in 64000 300000; do
  for args in "-1 -k -n64 in" "-d -k -n64 packed.bz2" "-9 -k -n64 big" "-d -k -n64 big_ref.bz2"; do
    cp ref.bz2 packed.bz2
    rm -f in.bz2 packed big.bz2 big_ref
    limited "$limit" "$bin" $args 2> err || fail "$args under $((limit / 1000)) MB: exit $? ($(head -c 200 err))"
    case $args in
      -1*) cmp -s in.bz2 ref.bz2 || fail "$args: output differs from bzip2's" ;;
      -9*) cmp -s big.bz2 big_ref.bz2 || fail "$args: output differs from bzip2's" ;;
      *packed*) cmp -s packed in || fail "$args: output differs" ;;
      *) cmp -s big_ref big || fail "$args: output differs" ;;
    esac
  done
done
require_intact in "$s_in"
require_intact big "$s_big"

# `input` compressed under `limit` KB with ARGS...: either bzip2's bytes (the .bz2 equals
# `ref`), or memory ran out as in bzip2 (exit 1, the message, no partial output).
compress_or_out_of_memory() {  # limit input ref args...
  local limit=$1 input=$2 ref=$3 st
  shift 3
  rm -f "$input.bz2"
  limited "$limit" "$bin" -k "$@" "$input" 2> err
  st=$?
  if [ "$st" -eq 0 ]; then
    cmp -s "$input.bz2" "$ref" ||
      fail "$input under $((limit / 1000)) MB: output differs from bzip2's"
    return
  fi
  [ "$st" -eq 1 ] || fail "$input under $((limit / 1000)) MB: exit $st ($(head -c 200 err))"
  grep -q "couldn't allocate enough memory" err ||
    fail "$input under $((limit / 1000)) MB: no out-of-memory message"
  require_absent "$input.bz2"
}

# Under a limit that holds no station, memory runs out as in bzip2; around the least that
# holds one, whichever allocation fails first (libdivsufsort's own once said "internal
# error", exit 3).
for limit in 12000 20000 22000 23000; do
  compress_or_out_of_memory "$limit" big big_ref.bz2 -9
done
require_intact big "$s_big"

# Long runs at 16 threads, where without a limit scouts would search ahead of the reader:
# under a limit it reads alone (a scout short of memory once ended the run by SIGABRT).
"$gen" runs 120000000 4 > runs
bzip2 -1 < runs > runs_ref.bz2
s_runs=$(sum runs)
for limit in 16000 20000 24000 28000 32000 40000; do
  compress_or_out_of_memory "$limit" runs runs_ref.bz2 -1 -n16 --gpu=off
done
require_intact runs "$s_runs"
echo "address limit: OK"
