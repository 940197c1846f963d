# -v lines: bzip2's ratio line padded to the longest name, "no data compressed" for empty
# input, "done" for -dv, "ok" for -tv, and the (stdin) name.
source "$(dirname "$0")/common.bash" "$@"

gen text 120000 11 >text
gen random 50000 12 >random
gen zeros 1000000 >zeros
setup() {
  cp ../text short; cp ../random a_much_longer_name.dat; cp ../zeros z; : >empty
}
setup_z() { setup; for f in short a_much_longer_name.dat z empty; do bzip2 -q "$f"; done; }

same_as_bzip2 "-v, several files" setup /dev/null bzip2 -v short a_much_longer_name.dat z empty
same_as_bzip2 "-v, one file" setup /dev/null bzip2 -kv short
same_as_bzip2 "-v, -c" setup /dev/null bzip2 -cv z empty
same_as_bzip2 "-v, stdin" setup ../text bzip2 -v
same_as_bzip2 "-v, empty stdin" setup /dev/null bzip2 -v
same_as_bzip2 "-v, incompressible input" setup ../random bzip2 -v1
same_as_bzip2 "-dv" setup_z /dev/null bzip2 -dv short.bz2 a_much_longer_name.dat.bz2 z.bz2 empty.bz2
same_as_bzip2 "-dcv" setup_z /dev/null bzip2 -dcv short.bz2 empty.bz2
same_as_bzip2 "-tv" setup_z /dev/null bzip2 -tv short.bz2 a_much_longer_name.dat.bz2 z.bz2 empty.bz2
same_as_bzip2 "-tv, stdin" setup_z ../gp/z.bz2 bzip2 -tv
same_as_bzip2 "-dv, stdin" setup_z ../gp/short.bz2 bzip2 -dv

# -vv is accepted; it prints what -v prints (bzip2's extra block lines come from libbzip2).
run_gp -kvv zeros
expect_eq "$RC" 0 "-vv exit code"
expect_eq "$ERR" "  zeros:   $(bzip2 -kvf zeros 2>&1 | sed 's/^  zeros: *//')" "-vv line"

finish
