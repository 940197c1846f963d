# Decompressing and testing: concatenated streams, files that are not bzip2, -f pass-
# through, trailing garbage, and damaged or truncated data (exit 2, partial output gone).
source "$(dirname "$0")/common.bash" "$@"

gen text 300000 7 >t
bzip2 -1 <t >t.bz2
cat t.bz2 t.bz2 >two.bz2
cp t.bz2 garbage.bz2 && echo "not a stream" >>garbage.bz2
printf 'hello, not compressed\n' >plain.txt
# A byte changed inside the third block, and a stream cut short.
cp t.bz2 bad.bz2 && printf '\x55' | dd of=bad.bz2 bs=1 seek=60000 conv=notrunc status=none
head -c 50000 t.bz2 >trunc.bz2
: >empty.bz2

# bzip2 leaves the output of a stream with trailing garbage at mode 600 (it skips its chmod
# on that path); with a 600 input both agree, and gpbzip2's copy of other modes is checked
# below.
setup() {
  cp ../t.bz2 ../two.bz2 ../garbage.bz2 ../plain.txt ../bad.bz2 ../trunc.bz2 ../empty.bz2 .
  cp ../plain.txt notbz.bz2
  chmod 600 garbage.bz2
}

same_as_bzip2 "concatenated streams" setup /dev/null bzip2 -d two.bz2
same_as_bzip2 "concatenated streams, -dc" setup /dev/null bzip2 -dc two.bz2 t.bz2
same_as_bzip2 "concatenated streams, -tv" setup /dev/null bzip2 -tv two.bz2
same_as_bzip2 "not a bzip2 file" setup /dev/null bzip2 -d notbz.bz2 plain.txt t.bz2
same_as_bzip2 "not a bzip2 file, -v" setup /dev/null bzip2 -dv notbz.bz2 t.bz2
same_as_bzip2 "missing (1) and not bzip2 (2): worst code" setup /dev/null bzip2 -d nosuch.bz2 notbz.bz2 t.bz2
same_as_bzip2 "not a bzip2 file, -q" setup /dev/null bzip2 -dq notbz.bz2
same_as_bzip2 "not a bzip2 file, -dc" setup /dev/null bzip2 -dc notbz.bz2 t.bz2
same_as_bzip2 "not a bzip2 file, stdin" setup ../plain.txt bzip2 -d
same_as_bzip2 "not a bzip2 file, -t" setup /dev/null bzip2 -t notbz.bz2 t.bz2
same_as_bzip2 "not a bzip2 file, -tv" setup /dev/null bzip2 -tv notbz.bz2 t.bz2
same_as_bzip2 "-df passes other data through" setup /dev/null bzip2 -df notbz.bz2 plain.txt
same_as_bzip2 "-dcf passes other data through" setup /dev/null bzip2 -dcf notbz.bz2 t.bz2
same_as_bzip2 "-df from stdin" setup ../plain.txt bzip2 -df
same_as_bzip2 "trailing garbage, -d" setup /dev/null bzip2 -d garbage.bz2
same_as_bzip2 "trailing garbage, -dv" setup /dev/null bzip2 -dkv garbage.bz2 t.bz2
same_as_bzip2 "trailing garbage, -dc" setup /dev/null bzip2 -dc garbage.bz2
same_as_bzip2 "trailing garbage, -dq" setup /dev/null bzip2 -dq garbage.bz2
same_as_bzip2 "trailing garbage, -t" setup /dev/null bzip2 -t garbage.bz2
same_as_bzip2 "trailing garbage, -tv" setup /dev/null bzip2 -tv garbage.bz2 t.bz2
chmod 644 garbage.bz2
run_gp -dk garbage.bz2
expect_eq "$(stat -c %a garbage)" 644 "trailing garbage: output mode copied"
# bzip2 -tq prints a stray "bzip2: garbage.bz2: " here; gpbzip2 prints nothing.
run_gp -tq garbage.bz2
expect_eq "$RC$ERR" 0 "trailing garbage, -tq: quiet, exit 0"

# Damage: gpbzip2 names the block; bzip2's exit code, files and stop are kept.
COMPARE_STDERR=0
same_as_bzip2 "damaged block, -d" setup /dev/null bzip2 -d t.bz2 bad.bz2 two.bz2
expect_match "$(cat gp.err)" "^bzip2: bad\.bz2: data integrity error in block 3 \(bit offset [0-9]+\)[^
]*
bzip2: Deleting output file bad, if it exists\.
bzip2: WARNING: some files have not been processed:
bzip2:    3 specified on command line, 1 not processed yet\.\$" "damaged block, -d: messages"
same_as_bzip2 "damaged block, -dv" setup /dev/null bzip2 -dv bad.bz2
expect_match "$(cat gp.err)" "^  bad\.bz2: 
bzip2: bad\.bz2: data integrity error in block 3 \(bit offset [0-9]+\)" "damaged block, -dv: messages"
same_as_bzip2 "damaged block, -dc" setup /dev/null bzip2 -dc bad.bz2 t.bz2
expect_match "$(cat gp.err)" "^bzip2: bad\.bz2: data integrity error in block 3" "damaged block, -dc: message"
same_as_bzip2 "truncated, -d" setup /dev/null bzip2 -d trunc.bz2
expect_eq "$(cat gp.err)" "bzip2: trunc.bz2: compressed file ends unexpectedly
bzip2: Deleting output file trunc, if it exists." "truncated, -d: messages"
same_as_bzip2 "empty file, -d" setup /dev/null bzip2 -d empty.bz2
expect_eq "$(head -1 gp.err)" "bzip2: empty.bz2: compressed file ends unexpectedly" "empty file, -d: message"
same_as_bzip2 "empty stdin, -d" setup /dev/null bzip2 -d
expect_eq "$(cat gp.err)" "bzip2: (stdin): compressed file ends unexpectedly" "empty stdin, -d: message"
COMPARE_STDERR=1
same_as_bzip2 "truncated and empty, -tv, testing goes on" setup /dev/null bzip2 -tv trunc.bz2 t.bz2 empty.bz2
COMPARE_STDERR=0
same_as_bzip2 "damaged, -t, testing goes on" setup /dev/null bzip2 -t bad.bz2 trunc.bz2 t.bz2 notbz.bz2
expect_match "$(cat gp.err)" "^bzip2: bad\.bz2: data integrity error in block 3 \(bit offset [0-9]+\)[^
]*
bzip2: trunc\.bz2: file ends unexpectedly
bzip2: notbz\.bz2: bad magic number \(file not created by bzip2\)

You can use the \`bzip2recover' program to attempt to recover
data from undamaged sections of corrupted files\.\$" "damaged, -t: messages"
COMPARE_STDERR=1

finish
