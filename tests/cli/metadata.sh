# What the output inherits from the input: permission bits, owner (as root), atime and
# mtime to the nanosecond; the input goes only once the output is complete (-k keeps it).
source "$(dirname "$0")/common.bash" "$@"

gen text 200000 51 >orig
times() { stat -c '%x|%y' "$1"; }

cp orig f
chmod 640 f
touch -m -d '2021-03-04 05:06:07.123456789' f
touch -a -d '2022-01-02 03:04:05.987654321' f
want_times=$(times f)
"$GP" f; expect_eq "$?" 0 "compress exit code"
[[ -e f ]] && fail "input removed after compressing"
expect_eq "$(stat -c %a f.bz2)" 640 "mode copied to .bz2"
expect_eq "$(times f.bz2)" "$want_times" "atime and mtime (ns) copied to .bz2"
"$GP" -d f.bz2; expect_eq "$?" 0 "decompress exit code"
[[ -e f.bz2 ]] && fail "input removed after decompressing"
expect_eq "$(stat -c %a f)" 640 "mode copied back"
expect_eq "$(times f)" "$want_times" "times copied back"
expect_file_same f orig "round trip"

# -k keeps the input; the times are those from before it was read; set-ID bits survive.
chmod 6751 f
touch -a -d '2022-01-02 03:04:05.987654321' f
"$GP" -k f
[[ -e f ]] || fail "-k keeps the input"
expect_file_same f orig "-k: input unchanged"
expect_eq "$(stat -c %a f.bz2)" 6751 "mode 6751 copied"
expect_eq "$(times f.bz2)" "$want_times" "-k: times copied"

# -c writes to stdout and leaves the file alone.
rm -f f.bz2
"$GP" -c f >/dev/null
[[ -e f && ! -e f.bz2 ]] || fail "-c keeps the input and makes no file"

# Owner and group: only root can give them away.
if [[ $(id -u) -eq 0 ]]; then
  cp orig o && chown 1234:5678 o && chmod 604 o
  "$GP" o
  expect_eq "$(stat -c '%u:%g %a' o.bz2)" "1234:5678 604" "owner, group, mode copied (root)"
  "$GP" -d o.bz2
  expect_eq "$(stat -c '%u:%g %a' o)" "1234:5678 604" "owner, group, mode copied back (root)"
else
  echo "note: not root; owner copy not checked"
fi

finish
