# --perturb: the output decodes exactly with every decoder at hand (bzip2, lbzip2, 7-Zip,
# Python's bz2, gpbzip2 itself) at every level, on hard inputs and a tar with files
# stored twice; $BZIP2 and $BZIP carry the flag; -v counts the perturbed blocks; -d and -t
# ignore it; without it the output stays bzip2's.
source "$(dirname "$0")/common.bash" "$@"
need tar

# Hard inputs of a block and a third at -9 (every block of them is deep at every level but
# the short last one at -1 and -2; the periodic one's are ordered from their period, and
# so left as they are), and a small source tree with a copied folder.
gen fibonacci 1200000 1 >fib
gen repeat 1200000 2 30011 >rep
gen periodic 1200000 3 abcdefghijklmnopqrstuvwxyz0123456789 >per
mkdir -p tree/a
gen text 60000 4 >tree/a/t.txt
gen binary 40000 5 >tree/a/b.bin
cp -r tree/a tree/b
gen text 200000 6 >tree/c.txt
tar -cf tree.tar tree
inputs=(fib rep per tree.tar)

# Decoders from stdin to stdout; those missing are named and left out.
decode_bzip2() { bzip2 -dc; }
decode_gpbzip2() { "$GP" -dc; }
decode_lbzip2() { lbzip2 -dc; }
decode_7zip() { "$sevenzip" x -si -so -tbzip2 2>/dev/null; }
decode_python() { python3 -c 'import bz2, sys; sys.stdout.buffer.write(bz2.decompress(sys.stdin.buffer.read()))'; }
decoders=(bzip2 gpbzip2)
if command -v lbzip2 >/dev/null; then decoders+=(lbzip2); else echo "note: lbzip2 not installed, not checked"; fi
sevenzip=$(command -v 7zz || command -v 7z || true)
if [[ -n $sevenzip ]]; then decoders+=(7zip); else echo "note: 7-Zip not installed, not checked"; fi
if python3 -c 'import bz2' 2>/dev/null; then
  decoders+=(python)
else
  echo "note: Python's bz2 not available, not checked"
fi

for level in 1 2 3 4 5 6 7 8 9; do
  for f in "${inputs[@]}"; do
    "$GP" -"$level" --perturb -c "$f" >"$f.bz2" || fail "-$level --perturb $f: exit code"
    for d in "${decoders[@]}"; do
      "decode_$d" <"$f.bz2" | cmp -s - "$f" || fail "-$level --perturb $f: $d does not give the input back"
    done
  done
  # The generated inputs have perturbed blocks: the stream is not bzip2's.
  bzip2 -"$level" -c fib | cmp -s - fib.bz2 && fail "-$level --perturb fib: bzip2's bytes"
done

# -v says how many blocks were perturbed: at -9 both blocks of fib and rep, the tar's one
# block, which holds its folder twice, and neither of per's: a short pattern repeated,
# which the CPU orders from its period as it is.
for f in fib rep per tree.tar; do
  run_gp -9 -v --perturb -c "$f"
  expect_eq "$RC" 0 "-v --perturb $f: exit code"
  case $f in tree.tar) n=1 m=1 ;; per) n=0 m=2 ;; *) n=2 m=2 ;; esac
  expect_eq "$(sed -n 2p gp.err)" "gpbzip2: $f: $n of $m blocks perturbed (written as randomised blocks)" \
    "-v --perturb $f: the count"
  if [[ $f == per ]]; then bzip2 -9 -c per | cmp -s - gp.out || fail "--perturb per: not bzip2's bytes"; fi
done
gen text 300000 7 >text
run_gp -9 -v --perturb -c text
expect_eq "$(sed -n 2p gp.err)" "gpbzip2: text: 0 of 1 blocks perturbed (written as randomised blocks)" \
  "-v --perturb on ordinary text"
bzip2 -9 -c text | cmp -s - gp.out || fail "--perturb on ordinary text: not bzip2's bytes"

# Without --perturb: bzip2's bytes (no block randomised) and no count under -v.
for f in "${inputs[@]}"; do
  run_gp -9 -v -c "$f"
  bzip2 -9 -c "$f" | cmp -s - gp.out || fail "$f without --perturb: not bzip2's bytes"
  [[ $ERR == *perturbed* ]] && fail "$f without --perturb: -v counts perturbed blocks"
done

# $BZIP2 and $BZIP carry it as they carry other flags.
"$GP" -9 --perturb -c fib >fib.p9
BZIP2=--perturb "$GP" -9 -c fib | cmp -s - fib.p9 || fail "BZIP2=--perturb"
BZIP="-9 --perturb" "$GP" -c fib | cmp -s - fib.p9 || fail "BZIP='-9 --perturb'"

# Compression only: -d, -t and gpbzcat take the flag and ignore it, as bzip2 -d ignores -9.
run_gp -d --perturb -c fib.p9
expect_eq "$RC" 0 "-d --perturb: exit code"
cmp -s gp.out fib || fail "-d --perturb: output"
run_gp -t --perturb fib.p9
expect_eq "$RC" 0 "-t --perturb: exit code"
"$WORK/bin/gpbzcat" --perturb fib.p9 | cmp -s - fib || fail "gpbzcat --perturb"
cp fib fib2 && "$GP" --perturb fib2 && bzip2 -t fib2.bz2 || fail "--perturb file to file"

finish
