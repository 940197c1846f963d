# The names the installed links give: gpbunzip2 decompresses, gpbzcat decompresses to
# stdout; compared with bunzip2 and bzcat (links to gpbzip2 named as bzip2's).
source "$(dirname "$0")/common.bash" "$@"

gen text 150000 41 >t
bzip2 -k t
setup() { cp ../t.bz2 a.bz2; cp ../t.bz2 b.bz2; cp ../t plain; }

same_as_bzip2 "bunzip2 files" setup /dev/null bunzip2 a.bz2 b.bz2
same_as_bzip2 "bunzip2 -k -v" setup /dev/null bunzip2 -kv a.bz2
same_as_bzip2 "bunzip2 stdin" setup ../t.bz2 bunzip2
same_as_bzip2 "bunzip2 -z compresses" setup /dev/null bunzip2 -z plain
same_as_bzip2 "bunzip2 on a plain file" setup /dev/null bunzip2 plain
same_as_bzip2 "bzcat files" setup /dev/null bzcat a.bz2 b.bz2
same_as_bzip2 "bzcat stdin" setup ../t.bz2 bzcat
same_as_bzip2 "bzcat a plain file" setup /dev/null bzcat plain a.bz2

# The project's own names: the links the build makes beside the program.
BIN=$(dirname "$GP")
for n in gpbunzip2 gpbzcat; do
  expect_eq "$(readlink "$BIN/$n")" gpbzip2 "build tree: $n links to gpbzip2"
  ln -s "$BIN/$n" "$n"
done
cp t.bz2 c.bz2
./gpbunzip2 c.bz2; expect_eq "$?" 0 "gpbunzip2 exit code"
expect_file_same c t "gpbunzip2 output"
[[ -e c.bz2 ]] && fail "gpbunzip2 removes its input"
./gpbzcat t.bz2 t.bz2 >cat.out; expect_eq "$?" 0 "gpbzcat exit code"
expect_file_same cat.out <(cat t t) "gpbzcat concatenates"
[[ -e t.bz2 ]] || fail "gpbzcat keeps its input"
./gpbzcat <t.bz2 >cat.out; expect_file_same cat.out t "gpbzcat stdin"
./gpbunzip2 nosuch.bz2 2>e; expect_eq "$?" 1 "gpbunzip2 missing file"
expect_eq "$(cat e)" "gpbunzip2: Can't open input file nosuch.bz2: No such file or directory." "messages carry the name called"

# cmake --install puts the program, both links, the man page and the license under the
# prefix (where this program was built by cmake and cmake is here).
BUILD=$(dirname "$BIN")
if [[ -f $BUILD/CMakeCache.txt ]] && command -v cmake >/dev/null; then
  cmake --install "$BUILD" --prefix "$WORK/inst" >install.log 2>&1 || fail "cmake --install: $(cat install.log)"
  cmp -s inst/bin/gpbzip2 "$GP" || fail "install: bin/gpbzip2"
  for n in gpbunzip2 gpbzcat; do
    expect_eq "$(readlink "inst/bin/$n")" gpbzip2 "install: $n links to gpbzip2"
  done
  expect_file_same inst/share/man/man1/gpbzip2.1 "$SRC/cli/gpbzip2.1" "install: man page"
  expect_file_same inst/share/doc/gpbzip2/LICENSE "$SRC/LICENSE" "install: LICENSE"
fi

finish
