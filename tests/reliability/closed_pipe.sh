# The reader of our output goes away: we stop at once (SIGPIPE, status 141, as bzip2),
# or with SIGPIPE ignored, report the write error with exit 1. Never a hang.
source "$(dirname "$0")/common.bash" "$@"

"$gen" text 20000000 7 > in
bzip2 -1 < in > in.bz2
for args in "-c -1" "-dc"; do
  src=in
  [ "$args" = "-dc" ] && src=in.bz2
  timeout -k 5 120 "$bin" $args "$src" | head -c 1000 > /dev/null
  st=${PIPESTATUS[0]}
  [ "$st" -eq 141 ] || [ "$st" -eq 1 ] || fail "$args into a closed pipe: exit $st"
  (
    trap '' PIPE
    timeout -k 5 120 "$bin" $args "$src" | head -c 1000 > /dev/null
    [ "${PIPESTATUS[0]}" -eq 1 ] || fail "$args into a closed pipe, SIGPIPE ignored: exit ${PIPESTATUS[0]}"
  ) || exit 1
done
echo "closed pipe: OK"
