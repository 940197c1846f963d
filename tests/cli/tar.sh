# tar running gpbzip2: -I and --use-compress-program, both ways, and with bzip2 on the
# other side.
source "$(dirname "$0")/common.bash" "$@"
need tar

mkdir -p src/sub
gen text 700000 31 >src/a.txt
gen binary 300000 32 >src/sub/b.bin
gen zeros 100000 >src/sub/z
ln -s a.txt src/link
tar -cf plain.tar src

tar -I "$GP" -cf t1.tar.bz2 src; expect_eq "$?" 0 "tar -I gpbzip2 -c"
bzip2 <plain.tar >ref.tar.bz2
expect_file_same t1.tar.bz2 ref.tar.bz2 "tar -I gpbzip2 makes bzip2's bytes"
mkdir x1 && tar -I "$GP" -xf t1.tar.bz2 -C x1; expect_eq "$?" 0 "tar -I gpbzip2 -x"
diff -r src x1/src >/dev/null || fail "tar -I round trip: trees differ"

tar --use-compress-program="$GP" -cf t2.tbz2 src; expect_eq "$?" 0 "--use-compress-program -c"
expect_file_same t2.tbz2 ref.tar.bz2 "--use-compress-program bytes"
mkdir x2 && tar --use-compress-program="$GP" -xf t2.tbz2 -C x2
diff -r src x2/src >/dev/null || fail "--use-compress-program round trip: trees differ"

# Mixed: bzip2 writes, gpbzip2 reads, and the listing is the same.
expect_eq "$(tar -I "$GP" -tf ref.tar.bz2 | sort)" "$(tar -tf plain.tar | sort)" "tar -t through gpbzip2"
# Options through -I, as tar passes them.
tar -I "$GP -1 -n2" -cf t3.tar.bz2 src
bzip2 -1 <plain.tar >ref1.tar.bz2
expect_file_same t3.tar.bz2 ref1.tar.bz2 "tar -I 'gpbzip2 -1 -n2'"
# A .tbz2 from tar decompresses to a .tar by name.
cp t2.tbz2 n.tbz2 && "$GP" -d n.tbz2 && expect_file_same n.tar plain.tar "gpbzip2 -d n.tbz2 -> n.tar"

finish
