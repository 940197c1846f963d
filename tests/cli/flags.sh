# Flags as bzip2 spells them: single, combined, long, repeated, overriding; bad flags;
# --help, -V and -L; the extra -n/--threads and --gpu (--progress: progress.sh).
source "$(dirname "$0")/common.bash" "$@"

gen text 300000 1 >text300k
setup_text() { cp ../text300k a; cp ../text300k b; }

same_as_bzip2 "-k" setup_text /dev/null bzip2 -k a
same_as_bzip2 "-kv9 (combined)" setup_text /dev/null bzip2 -kv9 a b
same_as_bzip2 "-k -v -1 (separate)" setup_text /dev/null bzip2 -k -v -1 a
same_as_bzip2 "-1k2 (last level wins)" setup_text /dev/null bzip2 -1k2 a
same_as_bzip2 "--fast -9 (short flags apply before long)" setup_text /dev/null bzip2 --fast -9 a
same_as_bzip2 "--best --keep" setup_text /dev/null bzip2 --best --keep a
same_as_bzip2 "-s (small: level 2 at most)" setup_text /dev/null bzip2 -s a
same_as_bzip2 "--small --compress --force --verbose" setup_text /dev/null bzip2 --small --compress --force --verbose b
same_as_bzip2 "-zc" setup_text /dev/null bzip2 -zc a b
same_as_bzip2 "--stdout" setup_text /dev/null bzip2 --stdout -3 a
same_as_bzip2 "-q -v" setup_text /dev/null bzip2 -q -kv a
same_as_bzip2 "-d --compress (long wins)" setup_text /dev/null bzip2 -d --compress a
same_as_bzip2 "-ct" setup_text /dev/null bzip2 -ct a
same_as_bzip2 "-t --stdout" setup_text /dev/null bzip2 -t --stdout
setup_dash() { cp ../text300k ./-dash; }
same_as_bzip2 "-- then a dash file" setup_dash /dev/null bzip2 -k -- -dash
same_as_bzip2 "lone - is no file" setup_text ../text300k bzip2 - -c
same_as_bzip2 "--repetitive-best" setup_text ../text300k bzip2 --repetitive-best -c
same_as_bzip2 "--exponential" setup_text ../text300k bzip2 --exponential -c

setup_pair() { cp ../text300k a; bzip2 -k a; }
same_as_bzip2 "-dc" setup_pair /dev/null bzip2 -dc a.bz2
same_as_bzip2 "-dfk" setup_pair /dev/null bzip2 -dfk a.bz2
same_as_bzip2 "-tv" setup_pair /dev/null bzip2 -tv a.bz2
same_as_bzip2 "--test --quiet" setup_pair /dev/null bzip2 --test --quiet a.bz2
same_as_bzip2 "--decompress --keep --force" setup_pair /dev/null bzip2 --decompress --keep --force a.bz2
same_as_bzip2 "-dkq" setup_pair /dev/null bzip2 -dkq a.bz2

# Bad flags: bzip2's first line and exit code; the usage after it is gpbzip2's own.
for bad in -x -kx --foo --keep=1; do
  (cd "$WORK" && bzip2 $bad a </dev/null >/dev/null 2>ref.err; echo $? >ref.rc)
  (cd "$WORK" && bin/bzip2 $bad a </dev/null >/dev/null 2>gp.err; echo $? >gp.rc)
  expect_eq "$(cat gp.rc)" "$(cat ref.rc)" "bad flag $bad: exit code"
  expect_eq "$(head -1 gp.err)" "$(head -1 ref.err)" "bad flag $bad: message"
  expect_match "$(cat gp.err)" $'\n   usage: bzip2 \\[flags and input files in any order\\]\n' "bad flag $bad: usage follows"
done
# bzip2 reads short flags first: -h wins over a bad long flag, a bad short one over --help.
run_gp --foo -h; expect_eq "$RC" 0 "--foo -h: help"
run_gp --help -x; expect_eq "$RC" 1 "--help -x: bad flag"
expect_eq "$(head -1 gp.err)" "gpbzip2: Bad flag \`-x'" "--help -x: message"

# Help and version go to stderr and exit 0, as bzip2's do.
for f in -h --help; do
  run_gp $f
  expect_eq "$RC" 0 "$f exit code"
  expect_eq "$(wc -c <gp.out)" 0 "$f writes nothing to stdout"
  expect_match "$ERR" $'\n   usage: gpbzip2 \\[flags and input files in any order\\]\n' "$f usage"
done
# --help reads as bzip2's: every flag bzip2 lists, in its column, in bzip2's order (with
# its words where they hold here), then ours, each in the man page; no parser types.
bzip2 --help 2>ref.help
bin/bzip2 --help 2>gp.help
flag_column() { grep -E '^   -' "$1" | cut -c1-23 | sed 's/ *$//'; }
expect_eq "$(flag_column gp.help | head -n "$(flag_column ref.help | wc -l)")" "$(flag_column ref.help)" \
  "--help lists bzip2's flags as bzip2 does"
for line in "   -d --decompress     force decompression" "   -1 .. -9            set block size to 100k .. 900k" \
  "   --fast              alias for -1" "   -L --license        display software version & license"; do
  grep -qxF -- "$line" ref.help || fail "bzip2 --help has no line [$line]"
  grep -qxF -- "$line" gp.help || fail "--help has no line [$line]"
done
grep -qF "   If invoked as \`bzip2', default action is to compress." ref.help || fail "bzip2 --help: names"
for line in "   If invoked as \`gpbzip2', default action is to compress." \
  "              as \`gpbunzip2', default action is to decompress." \
  "              as \`gpbzcat', default action is to decompress to stdout."; do
  grep -qxF -- "$line" gp.help || fail "--help has no line [$line]"
done
for opt in "-n --threads=N" "--gpu=MODE" "--progress" "--perturb"; do
  grep -q "^   $opt " gp.help || fail "--help lists $opt"
done
MAN="$SRC/cli/gpbzip2.1"
for opt in threads gpu progress perturb; do
  grep -q -- "--$opt" gp.help && grep -q -- "\\\\-\\\\-$opt" "$MAN" || fail "--$opt in --help and the man page"
done
grep -q "auto.*large inputs only" gp.help || fail "--help: auto opens a GPU for large inputs only, as the man page says"
grep -E -q "INT|TEXT|\{auto,on,off\}|Env:" gp.help && fail "--help shows parser types: $(cat gp.help)"
for f in -V --version -L --license -kV; do
  run_gp $f
  expect_eq "$RC" 0 "$f exit code"
  expect_eq "$(wc -c <gp.out)" 0 "$f writes nothing to stdout"
  expect_match "$ERR" "^gpbzip2, a parallel bzip2-compatible file compressor\.  Version [0-9]+\.[0-9]+\.[0-9]+\." "$f version"
done
for f in -V --version -kV; do
  run_gp $f
  expect_match "$ERR" "Build: (CUDA|CPU-only)" "$f build"
  expect_match "$ERR" "GPU" "$f GPUs"
done
# -L as bzip2 -L: version, copyright, license notice; the copyright is the LICENSE file's.
LICENSE_FILE="$SRC/LICENSE"
copyright=$(grep -m1 '^Copyright' "$LICENSE_FILE")
for f in -L --license; do
  run_gp $f
  [[ "$ERR" == *$'\n   '"$copyright."$'\n'* ]] || fail "$f: no line '   $copyright.' in [$ERR]"
  expect_match "$ERR" "free software; you can redistribute it and/or modify" "$f notice"
  expect_match "$ERR" "WITHOUT ANY WARRANTY" "$f warranty"
  expect_match "$ERR" "terms of the MIT license" "$f names the license"
done
expect_eq "$(head -1 "$LICENSE_FILE")" "MIT License" "LICENSE is the license -L names"

# -n / --threads and --gpu=off do not change the bytes: compare with bzip2 -9 and -5.
bzip2 -9 <text300k >ref9.bz2
bzip2 -5 <text300k >ref5.bz2
for t in "-n1" "-n 2" "--threads=3" "--threads 2" "-kn2"; do
  "$GP" $t <text300k >t.bz2 2>t.err
  expect_eq "$?" 0 "$t exit code"
  expect_file_same t.bz2 ref9.bz2 "$t output"
done
"$GP" -5 --gpu=off -n2 <text300k >t.bz2; expect_file_same t.bz2 ref5.bz2 "--gpu=off -5"
"$GP" --gpu off <text300k >t.bz2; expect_file_same t.bz2 ref9.bz2 "--gpu off"
for t in "-n0" "--threads=x" "--gpu=maybe"; do
  run_gp $t <text300k
  expect_eq "$RC" 1 "$t: rejected"
  expect_match "$ERR" "^gpbzip2: " "$t: message"
done
for t in "-n" "-kn" "--threads" "--gpu"; do
  run_gp $t
  expect_eq "$RC" 1 "$t without a value: exit code"
  expect_eq "$(head -1 gp.err)" "gpbzip2: ${t/-k/-} needs a value" "$t without a value: message"
done
run_gp --gpu=maybe <text300k
expect_eq "$(head -1 gp.err)" "gpbzip2: --gpu=maybe: the GPU mode is auto, on or off" "--gpu=maybe: message"
# A bad $GPBZIP2_GPU is named as such (it may have been set long before); --gpu overrides it.
GPBZIP2_GPU=maybe run_gp <text300k
expect_eq "$RC" 1 "GPBZIP2_GPU=maybe rejected"
expect_eq "$ERR" "gpbzip2: GPBZIP2_GPU=maybe: the GPU mode is auto, on or off
gpbzip2: For help, type: \`gpbzip2 --help'." "GPBZIP2_GPU=maybe: message"
GPBZIP2_GPU=maybe "$GP" --gpu=off <text300k >t.bz2; expect_file_same t.bz2 ref9.bz2 "--gpu=off beats a bad GPBZIP2_GPU"
GPBZIP2_GPU= "$GP" <text300k >t.bz2; expect_file_same t.bz2 ref9.bz2 "an empty GPBZIP2_GPU is auto"
# --gpu=on must fail (exit 1) where no GPU is usable; on a GPU machine it must work.
if "$GP" -V 2>&1 | grep -q "GPUs: none usable"; then
  run_gp --gpu=on <text300k; expect_eq "$RC" 1 "--gpu=on without a GPU"
  expect_match "$ERR" "^gpbzip2: --gpu=on: no usable GPU" "--gpu=on message"
  GPBZIP2_GPU=on "$GP" <text300k >/dev/null 2>&1; expect_eq "$?" 1 "GPBZIP2_GPU=on without a GPU"
  GPBZIP2_GPU=on "$GP" --gpu=off <text300k >t.bz2; expect_file_same t.bz2 ref9.bz2 "--gpu=off beats GPBZIP2_GPU=on"
else
  "$GP" --gpu=on <text300k >t.bz2; expect_file_same t.bz2 ref9.bz2 "--gpu=on with a GPU"
fi

finish
