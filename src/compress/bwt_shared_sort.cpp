#include "bwt_shared_sort.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <new>
#include <optional>
#include <vector>

#include "common/bit_reader.h"
#include "common/error.h"
#include "common/huge_pages.h"

namespace gpbzip2 {
namespace {

// Positions are counted into the buckets of their first two bytes in this many stretches,
// each with its own counts, so that the counting and the scattering are tasks too.
constexpr size_t kStretches = 16;
constexpr size_t kBuckets = 65536;
// Ranges of buckets whose offsets are found in a task each.
constexpr size_t kRanges = 64;
// A pass is cut into about this many tasks a thread, of at least kLeastTask rotations:
// enough that threads joining late find work and the tasks of a pass end together, few
// enough that the tasks cost little more than the work. The sort alone on an H100 host's
// 16 threads (tasks of 1,700 rotations), blocks of the tar: 10-15 ms against 14-19 with
// 16,384 (and 8 stretches), of silesia 7.5-8.4 against 9-10; on 4 threads, tasks of 2,048
// took 4-10% longer than of 16,384 (session 25).
constexpr size_t kTasksPerThread = 32;
constexpr size_t kLeastTask = 1024;
// Groups of more rotations than this are a long repeat, whose group would come back round
// after round: the sort gives up on them.
constexpr int32_t kLargestGroup = 16384;
// Past their first bytes, rotations are sorted by their bytes, 8 at a time, up to this
// many: most runs of equal prefixes in text part within a few bytes, where a round of
// doubling costs a random access per rotation however few bytes it decides.
constexpr int32_t kCompareBytes = 64;
// The doubling gives up once its rounds have ranked this many times n rotations, or
// where a group left open holds more than kLargestGroup.
constexpr int64_t kGiveUpPerByte = 4;
// Nor does the sort start where more than most_repeated(threads) of the block's positions
// begin a repeat of kRepeatWindow bytes: sorted alone, such blocks (silesia's nci, xml and
// samba parts, the tar's blocks of repeated files) took it 4-8 times libdivsufsort's time
// against 1.3-2.1 times for blocks with under 2% (2-core Xeon VM). Where more threads
// share the block, more: on an H100 host's cores, the tar's blocks with 10-15% took
// 0.7-0.8 of libdivsufsort's time shared by 4 threads, those with 10-40% 0.4-0.9 by 8 or
// 16, where silesia's with 15-70% give up in the doubling and lose 10% (session 24).
constexpr int32_t kRepeatWindow = 72;
double most_repeated(int threads) { return threads >= 8 ? 0.3 : threads >= 4 ? 0.15 : 0.1; }

struct Group {
  int32_t start, size;
  int32_t depth;  // bytes its rotations are known to share
};

// w[i..i+8) as a big-endian number, cyclically.
uint64_t word_at(const uint8_t* w, int32_t n, int32_t i) {
  if (i <= n - 8) return load_be64(w + i);
  uint64_t v = 0;
  for (int d = 0, j = i; d < 8; d++, j = j + 1 < n ? j + 1 : 0) v = v << 8 | w[j];
  return v;
}

// The share of w's positions whose next kRepeatWindow bytes occur elsewhere in w too,
// estimated from about one position in 32, chosen by their bytes so that the copies of a
// repeat are sampled at the same places. The samples are hashed in stretches together,
// then looked up in order.
double repeated_share(const uint8_t* w, int32_t n, const RunTogether& run) {
  if (n < 4 * kRepeatWindow) return 0;
  const int64_t starts = int64_t(n) - kRepeatWindow + 1;
  const size_t slots = std::bit_ceil(size_t(n) / 8);
  // A byte string sampled everywhere (a run's) could fill the table: half full is enough.
  const size_t most = slots / 2;
  std::vector<std::vector<uint64_t>> sampled(kStretches);
  run(kStretches, [&](size_t s) {
    const int32_t from = int32_t(starts * int64_t(s) / kStretches);
    const int32_t to = int32_t(starts * int64_t(s + 1) / kStretches);
    std::vector<uint64_t>& out = sampled[s];
    out.reserve(size_t(to - from) / 16);
    for (int32_t p = from; p < to && out.size() < most; p++) {
      uint32_t x;
      std::memcpy(&x, w + p, 4);
      if ((x * 0x9E3779B1u) >> 27 != 0) continue;
      uint64_t h = 0;
      for (int32_t k = 0; k < kRepeatWindow; k += 8) {
        uint64_t v;
        std::memcpy(&v, w + p + k, 8);
        h = (h ^ v) * 0x9E3779B97F4A7C15u;
        h ^= h >> 29;
      }
      out.push_back(h | 1);  // 0 marks an empty slot below
    }
  });
  std::vector<uint64_t> seen(slots, 0);
  size_t samples = 0, repeats = 0;
  for (const std::vector<uint64_t>& stretch : sampled)
    for (size_t j = 0; j < stretch.size() && samples < most; j++, samples++) {
      const uint64_t h = stretch[j];
      for (size_t i = h & (slots - 1);; i = (i + 1) & (slots - 1)) {
        if (seen[i] == h) {
          repeats++;
          break;
        }
        if (seen[i] == 0) {
          seen[i] = h;
          break;
        }
      }
    }
  // Under a quarter of the samples expected: few distinct 4-byte strings (a Fibonacci word
  // has five), as in the words whose doubling takes a round per bit of the period.
  if (samples < size_t(n) / 128) return 1;
  return double(repeats) / double(samples);
}

// A rotation's next 8 bytes (or its rank) beside it, for sorting.
struct Keyed {
  uint64_t key;
  int32_t x;
  bool operator<(const Keyed& o) const { return key < o.key; }
};

// A task's scratch for sorting `size` rotations, kept by its thread.
template <class T>
T* scratch(size_t size) {
  thread_local std::vector<T> v;
  if (v.size() < size) v.resize(size);
  return v.data();
}

// Most groups are a few rotations: an insertion sort of those took 1.5-4% less of the
// sort's time than std::sort (2-core Xeon VM).
void sort_keyed(Keyed* k, int32_t size) {
  if (size > 16) return std::sort(k, k + size);
  for (int32_t i = 1; i < size; i++)
    for (int32_t j = i; j > 0 && k[j] < k[j - 1]; j--) std::swap(k[j], k[j - 1]);
}

// Sorts the keyed rotations of a group, writes them back to sa, ranks each run of equal
// keys by where it starts, and hands those runs of more than one to `equal`.
template <class Equal>
void settle(Keyed* k, Group g, int32_t* sa, int32_t* rank, Equal equal) {
  sort_keyed(k, g.size);
  int32_t run = 0;
  for (int32_t j = 0; j < g.size; j++) {
    if (j > 0 && k[j].key != k[j - 1].key) {
      if (j - run > 1) equal(g.start + run, j - run);
      run = j;
    }
    sa[g.start + j] = k[j].x;
    rank[k[j].x] = g.start + run;
  }
  if (g.size - run > 1) equal(g.start + run, g.size - run);
}

// Orders a group of rotations that share g.depth bytes by their next bytes, up to
// kOrderDepth: ranges of more than kSplitMin rotations by one byte (a counting sort), then
// smaller ones 8 bytes at a time (a sort of words). Ranges still equal there are left
// open; with part_max > 0, ranges of at most that many are handed to `parts` unordered
// (the first pass cuts large buckets into tasks so). A range of more than kLargestGroup
// rotations that one byte does not split is a long stretch of a short period (`ab`
// repeated over a third of a text block took the sort 5 times libdivsufsort's time, as
// one task): it sets `hopeless` and the sort gives up.
constexpr int32_t kOrderDepth = 2 + kCompareBytes;
constexpr int32_t kSplitMin = 256;
void order_by_bytes(const uint8_t* w, int32_t n, Group g, int32_t part_max, int32_t* sa,
                    int32_t* rank, std::vector<Group>& open, std::vector<Group>& parts,
                    std::atomic<bool>& hopeless) {
  std::vector<Group> todo{g};
  while (!todo.empty() && !hopeless.load(std::memory_order_relaxed)) {
    const Group t = todo.back();
    todo.pop_back();
    if (t.size == 1) {
      rank[sa[t.start]] = t.start;
    } else if (t.depth >= kOrderDepth) {
      for (int32_t j = t.start; j < t.start + t.size; j++) rank[sa[j]] = t.start;
      open.push_back(t);
    } else if (t.size <= part_max) {
      parts.push_back(t);
    } else if (t.size > kSplitMin) {
      int32_t count[257] = {};
      auto next = [&](int32_t x) {
        const int32_t at = x + t.depth;
        return w[at < n ? at : at - n];
      };
      int32_t* const x = sa + t.start;
      for (int32_t j = 0; j < t.size; j++) count[next(x[j]) + 1]++;
      if (t.size > kLargestGroup && std::count(count + 1, count + 257, t.size) == 1)
        return hopeless.store(true, std::memory_order_relaxed);
      for (int c = 0; c < 256; c++) count[c + 1] += count[c];
      int32_t* const tmp = scratch<int32_t>(size_t(t.size));
      for (int32_t j = 0; j < t.size; j++) tmp[count[next(x[j])]++] = x[j];
      std::copy(tmp, tmp + t.size, x);
      for (int32_t c = 0, from = 0; c < 256; from = count[c++])
        if (count[c] > from) todo.push_back({t.start + from, count[c] - from, t.depth + 1});
    } else {
      Keyed* k = scratch<Keyed>(size_t(t.size));
      for (int32_t j = 0; j < t.size; j++) {
        const int32_t x = sa[t.start + j], at = x + t.depth;
        k[j] = {word_at(w, n, at < n ? at : at - n), x};
      }
      settle(k, t, sa, rank, [&](int32_t start, int32_t size) {
        todo.push_back({start, size, t.depth + 8});
      });
    }
  }
}

// Cuts [0, count) into ranges of about task_size rotations, sizes given by size_of(i).
template <class SizeOf>
std::vector<size_t> task_bounds(size_t count, size_t task_size, SizeOf size_of) {
  std::vector<size_t> bounds{0};
  size_t acc = 0;
  for (size_t i = 0; i < count; i++) {
    acc += size_t(size_of(i));
    if (acc >= task_size) {
      bounds.push_back(i + 1);
      acc = 0;
    }
  }
  if (bounds.back() != count) bounds.push_back(count);
  return bounds;
}

std::vector<Group> joined(std::vector<std::vector<Group>>& lists) {
  size_t total = 0;
  for (const auto& l : lists) total += l.size();
  std::vector<Group> all;
  all.reserve(total);
  for (auto& l : lists) {
    all.insert(all.end(), l.begin(), l.end());
    l.clear();
  }
  return all;
}

// Scratch on huge pages, freed at the end: the threads sharing the sort would otherwise
// queue for the process's page tables as they fault in fresh 4 KiB pages.
class HugeArray {
 public:
  explicit HugeArray(size_t elements)
      : bytes_(elements * sizeof(int32_t)),
        p_(static_cast<int32_t*>(allocate_huge_pages(bytes_))) {}
  ~HugeArray() { free_huge_pages(p_, bytes_); }
  HugeArray(const HugeArray&) = delete;
  HugeArray& operator=(const HugeArray&) = delete;
  int32_t* get() const { return p_; }
  int32_t& operator[](size_t i) const { return p_[i]; }

 private:
  size_t bytes_;
  int32_t* p_;
};

bool sort_shared(const uint8_t* w, int32_t n, int32_t* sa, const Team& team) {
  if (n <= 0) return true;
  const RunTogether& run = team.run;
  if (repeated_share(w, n, run) > most_repeated(team.threads)) return false;
  const size_t threads = size_t(std::max(1, team.threads));
  const size_t task_size = std::max(kLeastTask, size_t(n) / (threads * kTasksPerThread));
  const HugeArray rank{size_t(n)};

  // Every rotation into the bucket of its first two bytes: counts per stretch, offsets.
  std::optional<HugeArray> counts(std::in_place, kStretches * kBuckets);
  auto stretch = [&](size_t s) {
    return std::pair<int32_t, int32_t>(int32_t(int64_t(n) * int64_t(s) / kStretches),
                                       int32_t(int64_t(n) * int64_t(s + 1) / kStretches));
  };
  auto pair_at = [&](int32_t i) { return size_t(w[i]) << 8 | w[i + 1 < n ? i + 1 : 0]; };
  run(kStretches, [&](size_t s) {
    int32_t* c = counts->get() + s * kBuckets;
    std::fill(c, c + kBuckets, 0);
    const auto [from, to] = stretch(s);
    for (int32_t i = from; i < to; i++) c[pair_at(i)]++;
  });
  // Each stretch's offset in each bucket: the buckets' sizes summed in ranges, the ranges'
  // starts in order, then the offsets within each range.
  std::vector<int32_t> bucket_start(kBuckets + 1), range_start(kRanges + 1, 0);
  constexpr size_t kRangeBuckets = kBuckets / kRanges;
  run(kRanges, [&](size_t r) {
    int32_t size = 0;
    for (size_t s = 0; s < kStretches; s++)
      for (size_t b = r * kRangeBuckets; b < (r + 1) * kRangeBuckets; b++)
        size += (*counts)[s * kBuckets + b];
    range_start[r + 1] = size;
  });
  for (size_t r = 0; r < kRanges; r++) range_start[r + 1] += range_start[r];
  run(kRanges, [&](size_t r) {
    int32_t at = range_start[r];
    for (size_t b = r * kRangeBuckets; b < (r + 1) * kRangeBuckets; b++) {
      bucket_start[b] = at;
      for (size_t s = 0; s < kStretches; s++) {
        int32_t& c = (*counts)[s * kBuckets + b];
        const int32_t size = c;
        c = at;
        at += size;
      }
    }
  });
  bucket_start[kBuckets] = n;
  run(kStretches, [&](size_t s) {
    int32_t* c = counts->get() + s * kBuckets;
    const auto [from, to] = stretch(s);
    for (int32_t i = from; i < to; i++) sa[c[pair_at(i)]++] = i;
  });
  counts.reset();

  // The buckets cut into parts of at most kLargestGroup / 4 rotations (the larger ones by
  // their next bytes)...
  const std::vector<size_t> bucket_tasks =
      task_bounds(kBuckets, task_size,
                  [&](size_t b) { return bucket_start[b + 1] - bucket_start[b]; });
  std::vector<std::vector<Group>> open(bucket_tasks.size() - 1), cut(open.size());
  std::atomic<bool> hopeless{false};
  run(open.size(), [&](size_t t) {
    for (size_t b = bucket_tasks[t]; b < bucket_tasks[t + 1]; b++)
      if (const int32_t start = bucket_start[b], size = bucket_start[b + 1] - start; size > 0)
        order_by_bytes(w, n, {start, size, 2}, kLargestGroup / 4, sa, rank.get(), open[t],
                       cut[t], hopeless);
  });
  if (hopeless) return false;
  // ... then every part ordered by its bytes up to kOrderDepth.
  {
    const std::vector<Group> parts = joined(cut);
    const std::vector<size_t> tasks =
        task_bounds(parts.size(), task_size, [&](size_t g) { return parts[g].size; });
    open.resize(open.size() + tasks.size() - 1);
    const size_t first = open.size() - (tasks.size() - 1);
    run(tasks.size() - 1, [&](size_t t) {
      std::vector<Group> none;
      for (size_t g = tasks[t]; g < tasks[t + 1]; g++)
        order_by_bytes(w, n, parts[g], 0, sa, rank.get(), open[first + t], none, hopeless);
    });
  }
  if (hopeless) return false;

  // Then ranks by 2h from those by h, for the runs of equal ranks left: every group left
  // open shares at least h bytes, and ranks order all rotations by at least that many.
  int64_t ranked = 0;
  std::vector<Group> groups = joined(open);
  int32_t h = n;
  for (const Group& g : groups) h = std::min(h, g.depth);
  for (; !groups.empty(); h *= 2) {
    for (const Group& g : groups) {
      ranked += g.size;
      if (g.size > kLargestGroup) return false;  // a long repeat
    }
    if (ranked > kGiveUpPerByte * int64_t(n)) return false;
    if (h >= n) throw Error(ErrorKind::Internal, "BWT: equal rotations in a non-periodic block");
    const std::vector<size_t> tasks =
        task_bounds(groups.size(), task_size, [&](size_t g) { return groups[g].size; });
    open.resize(tasks.size() - 1);
    // Every key is read before any rank changes: two passes, each task's keys kept aside
    // in its groups' order.
    std::vector<std::vector<int32_t>> keys(open.size());
    run(open.size(), [&](size_t t) {
      size_t size = 0;
      for (size_t g = tasks[t]; g < tasks[t + 1]; g++) size += size_t(groups[g].size);
      keys[t].reserve(size);
      for (size_t g = tasks[t]; g < tasks[t + 1]; g++)
        for (int32_t j = groups[g].start, end = j + groups[g].size; j < end; j++) {
          const int32_t ahead = sa[j] + h;
          keys[t].push_back(rank[ahead < n ? ahead : ahead - n]);
        }
    });
    run(open.size(), [&](size_t t) {
      const int32_t* key = keys[t].data();
      for (size_t g = tasks[t]; g < tasks[t + 1]; g++) {
        const Group group = groups[g];
        Keyed* k = scratch<Keyed>(size_t(group.size));
        for (int32_t j = 0; j < group.size; j++)
          k[j] = {uint64_t(uint32_t(*key++)), sa[group.start + j]};
        settle(k, group, sa, rank.get(), [&](int32_t start, int32_t size) {
          open[t].push_back({start, size, std::max(group.depth, 2 * h)});
        });
      }
    });
    groups = joined(open);
  }
  return true;
}

}  // namespace

bool sort_rotations_shared(const uint8_t* w, int32_t n, int32_t* sa, const Team& team) {
  try {
    return sort_shared(w, n, sa, team);
  } catch (const std::bad_alloc&) {
    return false;  // its 4 bytes a block byte and more, where the one-thread sort's may still fit
  }
}

}  // namespace gpbzip2
