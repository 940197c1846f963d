# Standard input and output: byte-identical pipes, no compressed data to or from a
# terminal, and a reader that goes away ends gpbzip2 quietly.
source "$(dirname "$0")/common.bash" "$@"

gen text 400000 21 >text
for l in 1 5 9; do
  bzip2 -$l <text >ref$l.bz2
  "$GP" -$l <text >gp$l.bz2; expect_eq "$?" 0 "-$l pipe exit code"
  expect_file_same gp$l.bz2 ref$l.bz2 "-$l pipe output"
done
"$GP" -d <ref1.bz2 >back; expect_file_same back text "-d pipe"
"$GP" -dc <ref5.bz2 >back; expect_file_same back text "-dc pipe"
"$GP" -c <text | bzip2 -d >back; expect_file_same back text "-c pipe read by bzip2"
cat ref9.bz2 | "$GP" -t; expect_eq "$?" 0 "-t pipe"
"$GP" -c -- <text >gp.bz2; expect_file_same gp.bz2 ref9.bz2 "-c with no file: stdin"

# Terminals, through script(1): bzip2's refusal, word for word, and exit 1.
if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
  cp text tf && bzip2 -k tf
  on_tty() {  # on_tty NAME COMMAND...: stdin and stdout a terminal, stderr to a file
    script -qec "$*" /dev/null </dev/null >/dev/null
  }
  for prog in "$REAL_BZIP2_DIR/bzip2" "$WORK/bin/bzip2"; do
    tag=$([[ $prog == "$WORK"* ]] && echo gp || echo ref)
    on_tty "$prog 2>$tag.tty1; echo \$? >>$tag.tty1"          # compress stdin to the tty
    on_tty "$prog -c tf 2>$tag.tty2; echo \$? >>$tag.tty2"      # -c file to the tty
    on_tty "$prog -d 2>$tag.tty3; echo \$? >>$tag.tty3"         # decompress from the tty
    on_tty "$prog -t 2>$tag.tty4; echo \$? >>$tag.tty4"         # test from the tty
    on_tty "$prog -dc tf.bz2 >$tag.tty5 2>&1; echo \$? >>$tag.tty5"  # to the tty is fine
  done
  for i in 1 2 3 4 5; do
    diff ref.tty$i gp.tty$i >/dev/null || fail "terminal case $i: [$(cat gp.tty$i)] vs bzip2 [$(cat ref.tty$i)]"
  done
  expect_match "$(cat gp.tty1)" "^bzip2: I won't write compressed data to a terminal\.
bzip2: For help, type: \`bzip2 --help'\.
1\$" "terminal refusal text"

  # The progress line appears on a terminal for work that lasts, never with -q, and is
  # wiped at the end (the -v line is drawn again after it).
  gen text 20000000 23 >long
  t0=$(date +%s%N)
  script -qec "$GP -kv1 long" /dev/null </dev/null >prog.tty
  t1=$(date +%s%N)
  last=$(tr '\r' '\n' <prog.tty | grep -v '^ *$' | tail -1)
  expect_match "$last" "^  long: +[0-9.]+:1, .* saved, 20000000 in, [0-9]+ out\." "-v line after the meter"
  if (((t1 - t0) / 1000000 > 1500)); then
    expect_match "$(tr '\r' '\n' <prog.tty)" "  long: +[0-9.]+%, in [0-9.]+ MB/s, out [0-9.]+ MB/s, [0-9]+:[0-9][0-9] left" "progress line on a terminal"
  else
    echo "note: compression too fast for the progress line to be due; not checked"
  fi
  script -qec "$GP -qkf1 long" /dev/null </dev/null >prog.tty
  expect_eq "$(wc -c <prog.tty)" 0 "-q: no progress line"
else
  echo "note: script(1) cannot make a terminal here; terminal checks skipped"
fi

# Standard input that is a file, shared with the next command: left just past what was
# compressed, as bzip2 leaves it, also where scouts read it at their own offsets (long
# runs, 16 threads), so that the next command reads what was added after; and read from
# where it stood.
head -c 60000000 /dev/zero >zeros
bzip2 -1 <zeros >zeros.ref
echo added >added
{ "$GP" -1 -n16 -c >zeros.bz2; cat added >>zeros; cat >rest; } <zeros
expect_file_same zeros.bz2 zeros.ref "stdin file read by scouts"
expect_file_same rest added "stdin file left past what was compressed"
truncate -s 60000000 zeros
head -c 59999000 /dev/zero | bzip2 -1 >tail.ref
{ dd bs=1000 count=1 of=/dev/null 2>/dev/null; "$GP" -1 -n16 -c >tail.bz2; } <zeros
expect_file_same tail.bz2 tail.ref "stdin file read from its position"

# A reader that stops early: no message, whether SIGPIPE kills or EPIPE is returned.
gen text 20000000 22 | bzip2 -1 >big.bz2
"$GP" -dc big.bz2 2>pipe.err | head -c 100 >/dev/null
expect_eq "$(cat pipe.err)" "" "closed pipe (SIGPIPE): quiet"
(trap '' PIPE; "$GP" -dc big.bz2 2>pipe.err | head -c 100 >/dev/null)
expect_eq "$(cat pipe.err)" "" "closed pipe (EPIPE): quiet"
(trap '' PIPE; "$GP" -c1 text text text 2>pipe.err | head -c 10 >/dev/null)
expect_eq "$(cat pipe.err)" "" "closed pipe while compressing: quiet"

# A full disk on stdout is an I/O error: bzip2's message and exit 1.
if [[ -w /dev/full ]]; then
  write_to_full() { "$1" -c text >/dev/full 2>"$2"; echo $? >>"$2"; }
  write_to_full bzip2 ref.full
  write_to_full "$WORK/bin/bzip2" gp.full
  diff ref.full gp.full >/dev/null || fail "write to /dev/full: [$(cat gp.full)] vs bzip2 [$(cat ref.full)]"
fi

finish
