#!/usr/bin/env bash
# Usage: tests/fuzz/run_fuzz.sh HARNESS SECONDS [BUILD_DIR]
# Runs one libFuzzer harness (built with -DGPBZIP2_LIBFUZZER=ON, see README.md) at the
# lowest priority, starting from freshly written seeds and the kept corpus in
# BUILD_DIR/fuzz-work/HARNESS/; crashes, timeouts and leaks land in
# BUILD_DIR/fuzz-work/HARNESS/artifacts/, to be copied into regressions/HARNESS/.
set -euo pipefail
harness=$1 seconds=$2 build=${3:-build-fuzz}
work=$build/fuzz-work/$harness
mkdir -p "$work/corpus" "$work/artifacts"
"$build/tests/fuzz/fuzz_seeds" "$build/fuzz-work/seeds"
exec nice -n 19 "$build/tests/fuzz/fuzz_$harness" -max_total_time="$seconds" -timeout=120 \
  -rss_limit_mb=2560 -max_len=16384 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$build/fuzz-work/seeds/$harness"
