# SIGINT and SIGTERM at random moments while compressing or decompressing a file: either
# the job finished (exit 0, complete output) or it stops with exit 1, its partial output
# deleted and the input intact, as bzip2 does. Never a hang.
source "$(dirname "$0")/common.bash" "$@"
set -m  # background jobs keep the default SIGINT disposition

"$gen" text 30000000 8 > orig
bzip2 -9 < orig > orig.bz2
s_orig=$(sum orig) s_bz=$(sum orig.bz2)

for round in $(seq 1 12); do
  for sig in INT TERM; do
    rm -f job job.bz2
    if [ $((round % 2)) -eq 1 ]; then
      cp orig job && in=job out=job.bz2 args="-9" s_in=$s_orig s_out=$s_bz
    else
      cp orig.bz2 job.bz2 && in=job.bz2 out=job args="-d" s_in=$s_bz s_out=$s_orig
    fi
    "$bin" $args "$in" 2> err &
    pid=$!
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    kill -"$sig" "$pid" 2> /dev/null
    (sleep 60 && kill -KILL "$pid") 2> /dev/null &
    watchdog=$!
    wait "$pid"
    st=$?
    kill -- -"$watchdog" 2> /dev/null
    case $st in
      0)
        # Finished first: bzip2 removes the input after success.
        require_absent "$in"
        [ "$(sum "$out")" = "$s_out" ] || fail "round $round SIG$sig: exit 0 but wrong output"
        ;;
      1 | 130 | 143)
        # 130/143: the signal came before the handlers were installed, harmless while
        # nothing is written yet. Past the point where the input is deleted, bzip2 keeps
        # the complete output instead: no data may be lost either way.
        if [ -e "$in" ]; then
          require_intact "$in" "$s_in"
          require_absent "$out"
        else
          [ "$(sum "$out")" = "$s_out" ] || fail "round $round SIG$sig: input deleted, output incomplete"
        fi
        ;;
      137) fail "round $round SIG$sig ($args): still running 60 s after the signal" ;;
      *) fail "round $round SIG$sig ($args): exit $st; $(cat err)" ;;
    esac
  done
done
echo "signals: OK"
