# SIGINT, SIGTERM and SIGHUP in the middle of a compression: the half-written output is
# removed, the input stays intact, and the message and exit code are bzip2's.
source "$(dirname "$0")/common.bash" "$@"

gen text 80000000 61 >big.orig
gen text 100000 62 >small.orig
want=$(md5sum <big.orig)

# interrupt PROG SIG FILES...: starts PROG on copies of the inputs, waits until the
# output has data (so the work is under way), sends SIG; leaves $tag.err and $tag.rc.
interrupt() {
  local prog=$1 sig=$2 tag=$3
  shift 3
  rm -rf run && mkdir run && cp big.orig run/big && cp small.orig run/small
  (cd run && exec "$prog" "$@" 2>../$tag.err) &
  local pid=$! i
  for ((i = 0; i < 400; i++)); do
    [[ -s run/big.bz2 ]] && break
    sleep 0.02
  done
  kill -0 $pid 2>/dev/null || fail "$tag: finished before the signal; make the input larger"
  kill -s "$sig" $pid
  wait $pid
  echo $? >$tag.rc
  expect_eq "$(md5sum <run/big)" "$want" "$tag: input intact"
  [[ -e run/big.bz2 ]] && fail "$tag: partial output left behind"
  [[ -e run/small ]] || fail "$tag: the file not reached is kept"
}

for sig in INT TERM HUP; do
  interrupt "$REAL_BZIP2_DIR/bzip2" $sig ref-$sig big
  interrupt "$WORK/bin/bzip2" $sig gp-$sig big
  expect_eq "$(cat gp-$sig.rc)" "$(cat ref-$sig.rc)" "SIG$sig: exit code"
  expect_eq "$(cat gp-$sig.err)" "$(cat ref-$sig.err)" "SIG$sig: messages"
done
expect_eq "$(cat gp-INT.err)" "
bzip2: Control-C or similar caught, quitting.
bzip2: Deleting output file big.bz2, if it exists." "SIGINT message text"
expect_eq "$(cat gp-INT.rc)" 1 "SIGINT exit code"

# Several files: the ones not reached are counted, as bzip2 counts them.
interrupt "$REAL_BZIP2_DIR/bzip2" INT ref-multi big small
interrupt "$WORK/bin/bzip2" INT gp-multi big small
expect_eq "$(cat gp-multi.err)" "$(cat ref-multi.err)" "several files: messages"
expect_match "$(cat gp-multi.err)" "2 specified on command line, 1 not processed yet" "several files: count"
expect_eq "$(cat gp-multi.rc)" "$(cat ref-multi.rc)" "several files: exit code"

# gpbzip2's own name in the message.
interrupt "$GP" TERM gp-own big
expect_match "$(cat gp-own.err)" "^
gpbzip2: Control-C or similar caught, quitting\." "own name in the message"

# To stdout there is no file to clean up: like bzip2, the default action of the signal.
run_c() {
  rm -rf run && mkdir run && cp big.orig run/big
  (cd run && exec "$1" -c big >/dev/null 2>../$2.err) &
  local pid=$!
  sleep 0.3
  kill -TERM $pid
  wait $pid
  echo $? >$2.rc
}
run_c "$REAL_BZIP2_DIR/bzip2" ref-c
run_c "$WORK/bin/bzip2" gp-c
expect_eq "$(cat gp-c.rc)" "$(cat ref-c.rc)" "-c, SIGTERM: exit status"
expect_eq "$(cat gp-c.err)" "" "-c, SIGTERM: no message"

finish
