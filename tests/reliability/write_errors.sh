# Write failures: a full device, a file size limit, a full small filesystem. Exit 1, the
# partial output deleted, the input kept.
source "$(dirname "$0")/common.bash" "$@"

"$gen" text 3000000 5 > in
"$gen" random 1500000 6 > rnd
bzip2 -9 < in > in.bz2.ref
s_in=$(sum in) s_ref=$(sum in.bz2.ref)

# Standard output on a device that is always full.
expect_status 1 "$bin" -c in > /dev/full
expect_status 1 "$bin" -dc in.bz2.ref > /dev/full
expect_status 1 "$bin" -c < in > /dev/full

# A file size limit makes writes fail with EFBIG part way (SIGXFSZ ignored).
mkdir lim && cp in lim/in && cp in.bz2.ref lim/ref.bz2
(trap '' XFSZ; ulimit -f 200; expect_status 1 "$bin" lim/in)
require_intact lim/in "$s_in"
require_absent lim/in.bz2
(trap '' XFSZ; ulimit -f 200; expect_status 1 "$bin" -d lim/ref.bz2)
require_intact lim/ref.bz2 "$s_ref"
require_absent lim/ref

# A full filesystem (ENOSPC), where we may mount one.
mkdir small
if mount -t tmpfs -o size=2m tmpfs small 2> /dev/null; then
  cleanup() { [ "$BASHPID" = "$main_pid" ] && umount "$work/small" && rm -rf "$work"; }
  cp rnd small/rnd && s_rnd=$(sum small/rnd)
  expect_status 1 "$bin" small/rnd
  require_intact small/rnd "$s_rnd"
  require_absent small/rnd.bz2
  rm small/rnd
  cp in.bz2.ref small/in.bz2
  expect_status 1 "$bin" -d small/in.bz2
  require_intact small/in.bz2 "$s_ref"
  require_absent small/in
else
  echo "note: cannot mount a tmpfs here; the full-filesystem case was not run"
fi
echo "write errors: OK"
