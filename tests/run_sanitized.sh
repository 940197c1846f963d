#!/usr/bin/env bash
# Builds the library, the program and the tests with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-asan/ and runs ctest there. Any sanitizer report
# fails the test it occurs in, and any compiler warning the build, as in CI. Left out, as
# too slow under ASan: the >4 GiB scale test (reliability.scale). The C++ runtime stays
# shared here, so that ASan's operator new and delete are the ones called.
# Usage: bash tests/run_sanitized.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -DGPBZIP2_CUDA=OFF -DGPBZIP2_WERROR=ON -DGPBZIP2_STATIC_RUNTIME=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build-asan -j"$(nproc)"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E '^reliability[.]scale$' "$@"
