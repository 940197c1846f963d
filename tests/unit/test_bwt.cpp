// The rotation sort against a naive sort: blocks whose least rotation starts anywhere,
// blocks whose end repeats earlier text, hard words, and periodic blocks (whose origPtr,
// bzip2's choice among equal rotations, the oracle tests check against libbzip2).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "compress/bwt.h"
#include "test_helpers.h"

namespace {

bool rotation_less(const std::vector<uint8_t>& t, int32_t a, int32_t b) {
  const int32_t n = int32_t(t.size());
  for (int32_t k = 0; k < n; k++) {
    uint8_t x = t[size_t((a + k) % n)], y = t[size_t((b + k) % n)];
    if (x != y) return x < y;
  }
  return false;
}

std::vector<int32_t> naive_order(const std::vector<uint8_t>& t) {
  std::vector<int32_t> sa(t.size());
  std::iota(sa.begin(), sa.end(), 0);
  std::stable_sort(sa.begin(), sa.end(), [&](int32_t a, int32_t b) { return rotation_less(t, a, b); });
  return sa;
}

// Last column and origPtr for a block whose rotations are all distinct.
void require_matches_naive(const std::vector<uint8_t>& t) {
  auto sa = naive_order(t);
  gpbzip2::BwtWorkspace ws;
  gpbzip2::BwtResult got;
  gpbzip2::bwt_forward(t.data(), int32_t(t.size()), ws, got);
  const int32_t n = int32_t(t.size());
  std::vector<uint8_t> last(t.size());
  uint32_t orig = 0;
  for (int32_t i = 0; i < n; i++) {
    last[size_t(i)] = t[size_t((sa[size_t(i)] + n - 1) % n)];
    if (sa[size_t(i)] == 0) orig = uint32_t(i);
  }
  REQUIRE(got.last == last);
  REQUIRE(got.orig_ptr == orig);
}

std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n, int alphabet) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t('a' + rng() % unsigned(alphabet));
  return v;
}

bool is_periodic(const std::vector<uint8_t>& t) {
  const size_t n = t.size();
  for (size_t p = 1; p < n; p++)
    if (n % p == 0 && std::equal(t.begin() + long(p), t.end(), t.begin())) return true;
  return false;
}

}  // namespace

TEST_CASE("BWT of small random blocks equals a naive rotation sort", "[bwt]") {
  std::mt19937 rng(42);
  for (int alphabet : {1, 2, 3, 4, 26})
    for (size_t n = 1; n <= 200; n += (n < 20 ? 1 : 13)) {
      auto t = random_bytes(rng, n, alphabet);
      if (is_periodic(t)) continue;
      INFO("alphabet " << alphabet << " n " << n);
      require_matches_naive(t);
    }
  // Either side of where prefix doubling hands over to libdivsufsort.
  for (int alphabet : {2, 26})
    for (size_t n : {4095, 4096, 4097}) {
      auto t = random_bytes(rng, n, alphabet);
      INFO("alphabet " << alphabet << " n " << n);
      require_matches_naive(t);
    }
}

// The least rotation is looked for among the positions of the least pair of bytes, found
// 16 pairs at a time in 16-bit lanes: pairs on either side of 0x8000 and at the top of
// the range, and a least pair that only the wrap from the last byte to the first makes.
TEST_CASE("BWT where the least pair of bytes is high or wraps around", "[bwt]") {
  std::mt19937 rng(5);
  for (int base : {0x7E, 0xFB})
    for (size_t n : {2, 16, 17, 18, 63, 64, 65, 200, 1000, 5000}) {
      std::vector<uint8_t> t(n);
      for (auto& b : t) b = uint8_t(base + int(rng() % 4));
      INFO("base " << base << " n " << n);
      if (!is_periodic(t)) require_matches_naive(t);
      for (auto& b : t) b = std::max(b, uint8_t(base + 1));
      t.front() = t.back() = uint8_t(base);
      if (!is_periodic(t)) require_matches_naive(t);
    }
}

TEST_CASE("BWT when the block's end repeats earlier text", "[bwt]") {
  std::mt19937 rng(7);
  for (size_t repeat : {5, 300, 2047, 2049, 3000}) {
    auto x = random_bytes(rng, repeat, 2);
    auto y = random_bytes(rng, 500, 3);
    std::vector<uint8_t> t = x;
    t.insert(t.end(), y.begin(), y.end());
    t.insert(t.end(), x.begin(), x.end());
    INFO("repeat " << repeat);
    require_matches_naive(t);
  }
  // Cut-off repetitions ("abcab"): not periodic, yet the end repeats most of the block.
  for (std::string w : {"ab", "abc", "abcd", "aab"})
    for (size_t n = 3; n <= 60; n++) {
      std::vector<uint8_t> cut;
      for (size_t i = 0; i < n; i++) cut.push_back(uint8_t(w[i % w.size()]));
      if (is_periodic(cut)) continue;
      INFO(w << " cut at " << n);
      require_matches_naive(cut);
    }
  // A long run at the end: after run-length encoding this is how a run-heavy block ends.
  std::vector<uint8_t> t = random_bytes(rng, 1000, 4);
  for (int i = 0; i < 1000; i++) t.insert(t.end(), {0, 0, 0, 0, 251});
  require_matches_naive(t);
}

TEST_CASE("BWT of blocks cut from a periodic text at a length the period does not divide",
          "[bwt]") {
  // Rotations compared whole on the block twice (memcmp): their common prefixes are long.
  auto require_matches_doubled = [](const std::vector<uint8_t>& t) {
    const size_t n = t.size();
    std::vector<uint8_t> tt(t);
    tt.insert(tt.end(), t.begin(), t.end());
    std::vector<int32_t> sa(n);
    std::iota(sa.begin(), sa.end(), 0);
    std::sort(sa.begin(), sa.end(), [&](int32_t a, int32_t b) {
      return std::memcmp(&tt[size_t(a)], &tt[size_t(b)], n) < 0;
    });
    gpbzip2::BwtWorkspace ws;
    gpbzip2::BwtResult got;
    gpbzip2::bwt_forward(t.data(), int32_t(n), ws, got);
    std::vector<uint8_t> last(n);
    uint32_t orig = 0;
    for (size_t r = 0; r < n; r++) {
      last[r] = tt[size_t(sa[r]) + n - 1];
      if (sa[r] == 0) orig = uint32_t(r);
    }
    REQUIRE(got.last == last);
    REQUIRE(got.orig_ptr == orig);
  };
  std::mt19937 rng(11);
  // Periods, copies and cut points of every kind: 2 copies and many, a cut one byte past a
  // copy and one short of the next, u starting anywhere in the text; and the largest
  // period the sort takes, and one past it.
  for (int alphabet : {2, 3, 26})
    for (size_t p : {2, 3, 7, 64, 101, 1000, 4096, 4097}) {
      std::vector<uint8_t> u;
      do u = random_bytes(rng, p, alphabet);
      while (is_periodic(u));
      for (size_t n : {2 * p + 1, 3 * p - 1, 7 * p + p / 2, 9000 / p * p + 1}) {
        if (n < 2 * p || n % p == 0) continue;
        const size_t start = rng() % p;
        std::vector<uint8_t> t(n);
        for (size_t i = 0; i < n; i++) t[i] = u[(start + i) % p];
        INFO("alphabet " << alphabet << " p " << p << " n " << n << " start " << start);
        require_matches_doubled(t);
      }
    }
}

TEST_CASE("BWT of Fibonacci and Thue-Morse words and their cuts", "[bwt]") {
  std::string fib = "a", prev = "b";
  while (fib.size() < 3000) {
    std::string next = fib + prev;
    prev = fib;
    fib = next;
  }
  std::string tm = "a";
  while (tm.size() < 3000) {
    std::string flipped = tm;
    for (char& c : flipped) c = c == 'a' ? 'b' : 'a';
    tm += flipped;
  }
  for (const std::string& word : {fib, tm})
    for (size_t n : {1, 2, 5, 13, 64, 233, 987, 1000, 1024, 2584, 3000}) {
      std::vector<uint8_t> t(word.begin(), word.begin() + long(n));
      if (is_periodic(t)) continue;
      INFO("n " << n);
      require_matches_naive(t);
      std::rotate(t.begin(), t.begin() + long(n / 3), t.end());
      require_matches_naive(t);
    }
}

TEST_CASE("periodic blocks: equal rotations stay together, last column as naive", "[bwt]") {
  for (std::string w : {"ab", "bca", "xyxyxyxz", "aab"}) {
    std::vector<uint8_t> t;
    for (int i = 0; i < 500; i++) t.insert(t.end(), w.begin(), w.end());
    auto sa = naive_order(t);
    gpbzip2::BwtWorkspace ws;
    gpbzip2::BwtResult got;
    gpbzip2::bwt_forward(t.data(), int32_t(t.size()), ws, got);
    const size_t n = t.size();
    for (size_t i = 0; i < n; i++) REQUIRE(got.last[i] == t[(size_t(sa[i]) + n - 1) % n]);
    // origPtr lands inside the run of rotations equal to rotation 0.
    REQUIRE(got.orig_ptr < n);
    REQUIRE(!rotation_less(t, sa[got.orig_ptr], 0));
    REQUIRE(!rotation_less(t, 0, sa[got.orig_ptr]));
  }
}

// On periodic blocks of 10000 bytes or more bzip2 tries its main sort first; with few
// copies of a varied period it finishes within its budget (these did, and gave other
// bytes than bzip2 while only its fallback order was followed), with many it gives up.
TEST_CASE("periodic blocks give bzip2's origPtr whichever of its sorts decides", "[bwt][oracle]") {
  std::mt19937 rng(11);
  struct Case {
    int alphabet;
    size_t period, copies;
    int level;
  };
  for (Case c : std::initializer_list<Case>{{256, 1000, 20, 5}, {256, 1000, 74, 5},
                                            {4, 99999, 2, 9}, {4, 99999, 4, 9},
                                            {256, 5000, 2, 2}, {3, 257, 100, 1},
                                            {26, 45000, 9, 9}, {2, 31, 1000, 1}}) {
    std::vector<uint8_t> v(c.period);
    for (auto& b : v) b = uint8_t('a' + rng() % unsigned(c.alphabet));
    std::vector<uint8_t> t;
    for (size_t i = 0; i < c.copies; i++) t.insert(t.end(), v.begin(), v.end());
    INFO("alphabet " << c.alphabet << " period " << c.period << " x " << c.copies);
    REQUIRE(testing::gp_compress(t, c.level, 1) == testing::bzip2_reference(t, c.level));
  }
}
