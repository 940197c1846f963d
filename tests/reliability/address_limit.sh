# Under an address-space limit (ulimit -v, as batch schedulers and some shared hosts set):
# bzip2 runs in a few MB, so a small file or two threads must work here too; a thread
# count the limit cannot hold runs with the threads it can have, or fails as bzip2 does
# when memory runs out (exit 1, "couldn't allocate enough memory", no partial output, the
# input kept), never by a signal. Skipped where the binary cannot start under a limit at
# all (sanitizer builds map terabytes of shadow memory).
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

# 64 threads' stacks alone pass 300 MB.
for args in "-1 -k -n64 in" "-d -k -n64 packed.bz2"; do
  cp ref.bz2 packed.bz2
  rm -f in.bz2 packed
  limited 300000 "$bin" $args 2> err
  st=$?
  out=$([ "${args:0:2}" = "-d" ] && echo packed || echo in.bz2)
  if [ "$st" -eq 0 ]; then
    [ "${args:0:2}" = "-d" ] && { cmp -s packed in || fail "$args: output differs"; }
    [ "${args:0:2}" = "-1" ] && { cmp -s in.bz2 ref.bz2 || fail "$args: output differs"; }
  else
    [ "$st" -eq 1 ] || fail "$args under 300 MB: exit $st ($(head -c 200 err))"
    grep -q "couldn't allocate enough memory" err || fail "$args: no out-of-memory message"
    require_absent "$out"
  fi
  require_intact in "$s_in"
done
echo "address limit: OK"
