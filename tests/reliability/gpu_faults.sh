# Failures of the GPU path, injected with GPBZIP2_FAIL_CUDA_CALL=N (the Nth checked CUDA
# call of the process fails). With --gpu=auto a failing GPU only costs speed: exit 0 and
# bzip2's bytes. With --gpu=on the run either succeeds the same way or, when no GPU can
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
# Auto leaves the GPU shut for an input too small to gain from it, from a file or a
# pipe: failing the first call that opening a lane would make (listing makes one, and
# one for each GPU) changes nothing and says nothing.
first_lane_call=$(($(grep -c "GPU [0-9]*:" <<< "$info") + 2))
head -c 2000000 in > small
bzip2 -9 < small > small_ref.bz2
GPBZIP2_FAIL_CUDA_CALL=$first_lane_call expect_status 0 "$bin" -v -9 -c small > out.bz2 2> notes
cmp -s out.bz2 small_ref.bz2 || fail "small file: output differs from bzip2's"
grep -q failed notes && fail "small file opened the GPU: $(cat notes)"
GPBZIP2_FAIL_CUDA_CALL=$first_lane_call expect_status 0 "$bin" -v -9 < small > out.bz2 2> notes
cmp -s out.bz2 small_ref.bz2 || fail "small pipe: output differs from bzip2's"
grep -q failed notes && fail "small pipe opened the GPU: $(cat notes)"
# Decompression never touches the GPU.
GPBZIP2_FAIL_CUDA_CALL=1 expect_status 0 "$bin" -dc ref.bz2 > back
cmp -s back in || fail "decompression with a failing GPU"
echo "GPU faults: OK"
