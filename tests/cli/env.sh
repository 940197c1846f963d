# Default flags from $BZIP2 and $BZIP, read as bzip2 reads them: split at white space,
# BZIP2 before BZIP, both before the command line (so files and -- work there too).
source "$(dirname "$0")/common.bash" "$@"

gen text 250000 5 >text
bzip2 -1 <text >c.bz2
setup() { cp ../text a; cp ../text b; cp ../c.bz2 .; }

export BZIP2="-k -1"
same_as_bzip2 "BZIP2=-k -1" setup /dev/null bzip2 a
export BZIP2="  -k	-v  " BZIP="-2"
same_as_bzip2 "BZIP2 and BZIP, tabs and spaces" setup /dev/null bzip2 a
export BZIP2="-9" BZIP="-1"
same_as_bzip2 "BZIP after BZIP2" setup /dev/null bzip2 -k a
export BZIP2="-1"
unset BZIP
same_as_bzip2 "command line after env" setup /dev/null bzip2 -k -9 a
export BZIP2="-d"
same_as_bzip2 "BZIP2=-d" setup /dev/null bzip2 -k c.bz2
export BZIP2="b"
same_as_bzip2 "a file name in BZIP2" setup /dev/null bzip2 -k a
export BZIP2="--"
same_as_bzip2 "-- in BZIP2 makes every argument a file" setup /dev/null bzip2 -k a
BZIP2="-kx" bzip2 -h 2>ref.err; expect_eq "$?" 1 "bzip2 itself: bad flag in BZIP2 before -h"
BZIP2="-kx" bin/gpbzip2 -h 2>gp.err; RC=$?
expect_eq "$RC" 1 "bad flag in BZIP2 comes before -h: exit code"
expect_eq "$(head -1 gp.err)" "gpbzip2: Bad flag \`-kx'" "bad flag in BZIP2 comes before -h: message"
unset BZIP2

# Through tar, which runs "gpbzip2" and "gpbzip2 -d": BZIP2 reaches it.
need tar
mkdir tree && cp text tree/
BZIP2=-1 tar -I "$GP" -cf t1.tar.bz2 tree
tar -cf - tree | bzip2 -1 >ref1.tar.bz2
expect_file_same t1.tar.bz2 ref1.tar.bz2 "tar -I with BZIP2=-1"

finish
