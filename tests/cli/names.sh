# Output names, inputs that are skipped, existing outputs, several files in one call and
# the exit code that results: all as bzip2 does them, compared in the same situation.
source "$(dirname "$0")/common.bash" "$@"

gen text 20000 3 >plain
bzip2 -k plain

setup_suffixes() {
  for s in bz2 bz tbz2 tbz; do cp ../plain.bz2 "f.$s"; done
  cp ../plain.bz2 noext
  cp ../plain.bz2 odd.bz2.x
}
same_as_bzip2 "-d: .bz2 .bz -> name, .tbz2 .tbz -> .tar" setup_suffixes /dev/null bzip2 -d f.bz2 f.bz f.tbz2
same_as_bzip2 "-d: .tbz -> .tar" setup_suffixes /dev/null bzip2 -dk f.tbz
same_as_bzip2 "-d: unknown suffix gets .out with a warning" setup_suffixes /dev/null bzip2 -d noext odd.bz2.x
same_as_bzip2 "-dq: no warning" setup_suffixes /dev/null bzip2 -dq noext
same_as_bzip2 "bunzip2 name" setup_suffixes /dev/null bunzip2 f.bz2 noext
same_as_bzip2 "-z: compressed suffixes refused" setup_suffixes /dev/null bzip2 -z f.bz2 f.bz f.tbz2 f.tbz noext
same_as_bzip2 "-zq: refused quietly" setup_suffixes /dev/null bzip2 -zq f.bz2 noext
same_as_bzip2 "-c refuses them too" setup_suffixes /dev/null bzip2 -c f.bz2 noext

setup_existing() {
  cp ../plain a; cp ../plain b; echo old >a.bz2
  cp ../plain.bz2 c.bz2; echo old >c
}
same_as_bzip2 "existing output kept" setup_existing /dev/null bzip2 a b
same_as_bzip2 "existing output, -f" setup_existing /dev/null bzip2 -f a b
same_as_bzip2 "-d: existing output kept" setup_existing /dev/null bzip2 -d c.bz2
same_as_bzip2 "-d: existing output, -f" setup_existing /dev/null bzip2 -df c.bz2

setup_odd() {
  cp ../plain reg; cp ../plain.bz2 reg2.bz2
  mkdir dir dir.bz2
  ln -s reg link; ln -s reg2.bz2 link.bz2
  cp ../plain hard; ln hard hard2
  cp ../plain three; ln three three2; ln three three3
}
same_as_bzip2 "dirs, symlinks, hard links, missing files" setup_odd /dev/null bzip2 -k dir link hard three missing reg
same_as_bzip2 "same, quiet" setup_odd /dev/null bzip2 -q dir link hard missing reg
same_as_bzip2 "-f takes symlinks and hard links" setup_odd /dev/null bzip2 -f link hard
same_as_bzip2 "-d: dirs, symlinks, missing" setup_odd /dev/null bzip2 -d dir.bz2 link.bz2 missing.bz2 reg2.bz2
same_as_bzip2 "-t: dirs, missing" setup_odd /dev/null bzip2 -t dir.bz2 missing.bz2 reg2.bz2
same_as_bzip2 "-c: dirs, missing, symlink" setup_odd /dev/null bzip2 -c dir missing link reg
same_as_bzip2 "-dc: dirs, missing" setup_odd /dev/null bzip2 -dc dir.bz2 missing.bz2 reg2.bz2

setup_multi() {
  for i in 1 2 3; do cp ../plain "m$i"; done
  : >empty
}
same_as_bzip2 "several files" setup_multi /dev/null bzip2 m1 m2 empty m3
same_as_bzip2 "several files to stdout" setup_multi /dev/null bzip2 -c m1 empty m2
same_as_bzip2 "several files, one missing in the middle" setup_multi /dev/null bzip2 -v m1 nope m2

# A FIFO is not a normal file (bzip2 would block opening it; gpbzip2 does not).
mkfifo fifo
run_gp fifo
expect_eq "$RC" 1 "fifo: exit code"
expect_eq "$ERR" "gpbzip2: Input file fifo is not a normal file." "fifo: message"

finish
