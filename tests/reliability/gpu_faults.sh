# Failures of the GPU path, injected with GPBZIP2_FAIL_CUDA_CALL=N (the Nth checked CUDA
# call of the process fails), compressing and decompressing. With --gpu=auto a failing
# GPU only costs speed: exit 0 and bzip2's bytes. With --gpu=on the run either succeeds the same way or, when no GPU can
# be opened, exits 1 leaving no output. Two threads, so that auto opens the GPU for this
# 40 MB input. Skipped without a CUDA build and a usable GPU.
source "$(dirname "$0")/common.bash" "$@"

info=$("$bin" -V 2>&1)
grep -q "Build: CUDA" <<< "$info" || skip "CPU-only build"
grep -q "GPUs: none usable" <<< "$info" && skip "no usable GPU"

"$gen" text 40000000 12 > in
bzip2 -9 < in > ref.bz2
s_in=$(sum in) s_ref=$(sum ref.bz2)

for n in 1 2 3 4 5 6 7 8 10 12 16 20 30 50 100 200 500 1000; do
  GPBZIP2_FAIL_CUDA_CALL=$n expect_status 0 "$bin" --gpu=auto -n2 -9 -c in > out.bz2
  cmp -s out.bz2 ref.bz2 || fail "--gpu=auto, CUDA call $n failing: output differs from bzip2's"

  cp in job
  GPBZIP2_FAIL_CUDA_CALL=$n timeout -k 5 300 "$bin" --gpu=on -n2 -9 job
  st=$?
  case $st in
    0)
      require_absent job
      [ "$(sum job.bz2)" = "$s_ref" ] || fail "--gpu=on, CUDA call $n failing: output differs from bzip2's"
      ;;
    1)
      require_intact job "$s_in"
      require_absent job.bz2
      ;;
    *) fail "--gpu=on, CUDA call $n failing: exit $st" ;;
  esac
  rm -f job job.bz2
done
# Auto opens the GPU only for inputs worth its start: with two threads, a file of 9 MB or
# more at once, a pipe once 2.25 MB is read. With the call that opens the first lane
# failing (listing the GPUs makes no checked call), an input that leaves the GPU shut
# gets no notice, and one that opens it gets one; the output is bzip2's either way.
first_lane_call=1
# gpu_opens WANT ARGS...: WANT is yes or no.
gpu_opens() {
  local want=$1 opened=no
  shift
  GPBZIP2_FAIL_CUDA_CALL=$first_lane_call expect_status 0 "$bin" -v -n2 -9 "$@" > out.bz2 2> notes
  grep -q failed notes && opened=yes
  [ "$opened" = "$want" ] || fail "GPU opened: $opened, expected $want: $* ($(cat notes))"
}
for want in 1.5:no:no 6:no:yes 12:yes:yes; do  # MB : opens from a file : from a pipe
  IFS=: read -r size file pipe <<< "$want"
  head -c "$(awk "BEGIN {print $size * 1000000}")" in > part
  bzip2 -9 < part > part_ref.bz2
  gpu_opens "$file" -c part
  cmp -s out.bz2 part_ref.bz2 || fail "$size MB file: output differs from bzip2's"
  cat part | gpu_opens "$pipe" || exit 1
  cmp -s out.bz2 part_ref.bz2 || fail "$size MB pipe: output differs from bzip2's"
done
# Decompression and -t the same way: a failing GPU costs only speed, and a file that
# could not be opened on the GPU with --gpu=on is left as it was.
for n in 1 2 3 4 5 6 8 12 20 30 50 80 90 100 120 200; do
  GPBZIP2_FAIL_CUDA_CALL=$n expect_status 0 "$bin" --gpu=auto -n2 -dc ref.bz2 > back
  cmp -s back in || fail "-d --gpu=auto, CUDA call $n failing: output differs"
  GPBZIP2_FAIL_CUDA_CALL=$n expect_status 0 "$bin" --gpu=auto -n2 -t ref.bz2
  cp ref.bz2 job.bz2
  GPBZIP2_FAIL_CUDA_CALL=$n timeout -k 5 300 "$bin" --gpu=on -n2 -d job.bz2
  st=$?
  case $st in
    0)
      require_absent job.bz2
      [ "$(sum job)" = "$s_in" ] || fail "-d --gpu=on, CUDA call $n failing: output differs"
      ;;
    1)
      require_intact job.bz2 "$s_ref"
      require_absent job
      ;;
    *) fail "-d --gpu=on, CUDA call $n failing: exit $st" ;;
  esac
  rm -f job job.bz2
done
# A run that used the GPU leaves the device's release to a child that ends just after the
# process (exit_program): a reader of its output gets every byte and the end, the status
# is the run's, and a second later nothing of the run is left running.
"$bin" --gpu=on -n2 -9 -c in | cmp -s - ref.bz2 || fail "--gpu=on into a pipe: output differs from bzip2's"
head -c 3000000 ref.bz2 > cut.bz2
expect_status 2 "$bin" --gpu=on -n2 -dc cut.bz2 > /dev/null 2> /dev/null
sleep 1
ps -ww -eo stat=,args= > procs
grep -v '^Z' procs | grep -F -e "$bin --gpu=on" && fail "a GPU run's process is still running"
echo "GPU faults: OK"
