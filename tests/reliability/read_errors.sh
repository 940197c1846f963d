# Read failures: an input that cannot be opened or is a directory, and an I/O error part
# way through a file (injected into read(2) with an LD_PRELOAD shim built here). Exit 1,
# no output left behind, the input kept; other files on the command line still done.
source "$(dirname "$0")/common.bash" "$@"

"$gen" text 4000000 9 > in
bzip2 -9 < in > packed.bz2
s_in=$(sum in) s_bz=$(sum packed.bz2)
mkdir dir

expect_status 1 "$bin" -c missing > /dev/null
expect_status 1 "$bin" -c < dir > /dev/null
expect_status 1 "$bin" -dc < dir > /dev/null
expect_status 1 "$bin" -k dir
require_absent dir.bz2

# One bad name among good ones: the good file is still compressed, the status is 1.
cp in good
expect_status 1 "$bin" -k missing good
[ "$(sum good.bz2)" = "$s_bz" ] || fail "good file not compressed after a missing one"
rm good good.bz2

command -v cc > /dev/null || skip "no C compiler for the read(2) shim"
cat > shim.c <<'C'
/* Makes read(2) fail with EIO once FAIL_READ_AFTER bytes have been read from the file
   FAIL_READ_PATH, and records that it did in FAIL_READ_PATH.injected. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long long done;

ssize_t read(int fd, void* buf, size_t n) {
  static ssize_t (*real)(int, void*, size_t);
  if (!real) real = (ssize_t(*)(int, void*, size_t))dlsym(RTLD_NEXT, "read");
  const char* path = getenv("FAIL_READ_PATH");
  const char* after = getenv("FAIL_READ_AFTER");
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t len = path && after ? readlink(link, target, sizeof target - 1) : -1;
  if (len < 0) return real(fd, buf, n);
  target[len] = 0;
  if (strcmp(target, path) != 0) return real(fd, buf, n);
  long long limit = atoll(after);
  if (done >= limit) {
    char mark[4200];
    snprintf(mark, sizeof mark, "%s.injected", path);
    close(open(mark, O_WRONLY | O_CREAT, 0644));
    errno = EIO;
    return -1;
  }
  if ((long long)n > limit - done) n = (size_t)(limit - done);
  ssize_t r = real(fd, buf, n);
  if (r > 0) done += r;
  return r;
}
C
cc -shared -fPIC -O2 -o shim.so shim.c -ldl || fail "cannot build the read(2) shim"

# inject WHAT ARGS...: runs the program with reads of $work/WHAT failing part way.
inject() {
  local what=$1 at=$2
  shift 2
  rm -f "$what.injected"
  FAIL_READ_PATH=$work/$what FAIL_READ_AFTER=$at LD_PRELOAD=$work/shim.so \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 expect_status 1 "$@"
  [ -e "$what.injected" ] || fail "no read error was injected into $*"
}

for at in 0 1000 1500000; do
  inject in "$at" "$bin" in
  require_intact in "$s_in"
  require_absent in.bz2
done
for at in 0 10 100000; do
  inject packed.bz2 "$at" "$bin" -d packed.bz2
  require_intact packed.bz2 "$s_bz"
  require_absent packed
  inject packed.bz2 "$at" "$bin" -t packed.bz2
done
echo "read errors: OK"
