# Files the user may not read or write: bzip2's messages and exit codes, and no owner
# change for an ordinary user. Run as root, the programs run as nobody (setpriv).
source "$(dirname "$0")/common.bash" "$@"

if [[ $(id -u) -eq 0 ]]; then
  need setpriv
  RUN_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 755 "$WORK"
fi

gen text 50000 71 >t
bzip2 -k t
# The folders are open to all except where a case needs a folder it cannot write.
setup() {
  chmod 777 .
  cp ../t readable && chmod 644 readable
  cp ../t secret && chmod 000 secret
  cp ../t.bz2 secret.bz2 && chmod 000 secret.bz2
  cp ../t.bz2 ok.bz2 && chmod 644 ok.bz2
}
setup_locked() { setup; chmod 555 .; }

same_as_bzip2 "unreadable input" setup /dev/null bzip2 -k secret readable
same_as_bzip2 "unreadable input, -c" setup /dev/null bzip2 -c secret readable
same_as_bzip2 "unreadable input, -d" setup /dev/null bzip2 -dk secret.bz2 ok.bz2
same_as_bzip2 "unreadable input, -dc" setup /dev/null bzip2 -dc secret.bz2 ok.bz2
same_as_bzip2 "unreadable input, -t" setup /dev/null bzip2 -t secret.bz2 ok.bz2
same_as_bzip2 "folder not writable" setup_locked /dev/null bzip2 -k readable
same_as_bzip2 "folder not writable, -d" setup_locked /dev/null bzip2 -dk ok.bz2
if ((${#RUN_AS[@]})); then
  # A sticky folder: the output can be made, the input (root's) cannot be removed.
  setup_sticky() { setup; chmod 1777 .; }
  same_as_bzip2 "input not removable" setup_sticky /dev/null bzip2 readable secret
fi

if ((${#RUN_AS[@]})); then
  # An ordinary user's output belongs to that user, whoever owned the input.
  rm -rf own && mkdir own && chmod 777 own && cp t own/t && chmod 666 own/t
  (cd own && "${RUN_AS[@]}" "$GP" -k t)
  expect_eq "$(stat -c '%u %a' own/t.bz2)" "65534 666" "ordinary user: own file, mode copied"
fi

finish
