// Rotation sort of a batch of blocks by prefix doubling with CUB radix sorts.
//
// All blocks of a batch are sorted as one array: a rotation is named by its global
// position i (block b holds positions start[b]..start[b+1]), and its rank is the global
// sorted position of the first member of its group (rotations with an equal prefix of
// the length sorted so far). The first sort keys on (b, leading bytes) over the whole
// batch, the bytes as digits in the batch's alphabet (more of them where it is small);
// each doubling round sorts the rotations still in groups on (rank[i], rank[i+h]), or,
// where the batch has few groups (long repeats), on dense numbers of the ranks i, i+h,
// ... i+(t-1)h, t up to 4, in a key no longer.
// Both sorts move 64-bit keys alone, the rotation's position in its block carried in the
// low bits. Where most rotations of a round are in groups of up to a few thousand, small
// groups are sorted where they lie (a rotation's place found by counting its group's
// smaller keys), medium ones by a thread block each in shared memory, and the radix sort
// takes only the keys of large groups.
// A rotation alone in its group is final: its L byte and, for i = start[b], origPtr are
// written right away and it leaves the active set (singleton elimination).
// A group that survives to a prefix of n bytes holds equal rotations: the block is
// periodic and goes back to the CPU, which reproduces bzip2's order for those.
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <utility>

#include "batch.cuh"
#include "cuda_check.h"
#include "compress/gpu_bwt.h"
#include "gpu_move_to_front.cuh"

namespace gpbzip2 {
namespace {

// Bits of a position in a block: blocks are under 2^20 bytes (900 kB at -9).
constexpr int kBlockBits = 20;
// No rank yet (ranks are positions in a batch of at most 2^24 bytes).
constexpr uint32_t kNoRank = ~0u;
// Thread blocks that look for the batch's alphabet (two a multiprocessor of an H100),
// each over a stride of the text.
constexpr unsigned kAlphabetGrid = 264;
// The first sort's digits stay below this many bits (and so at most this many digits),
// so that the block id can be shifted above them.
constexpr int kMaxKeyBits = 63;
// Groups of up to this many rotations are sorted where they lie, by counting (against the
// radix sort, before medium groups had their own: 32 to 256 alike on silesia, the tar and
// the hard inputs, 16 slower; against the medium sort, 64 ahead of 32 by 2-4% on silesia
// and the tar and 10% on the Fibonacci word, and of 128 by about 1%: session 28).
constexpr uint32_t kSmallGroup = 64;
// Bigger groups of up to kMediumGroup are sorted by one thread block each in shared
// memory: their keys read and written once, where the radix sort makes six passes. A
// perturbed binary word's middle rounds are groups of hundreds to a few thousand. Three
// block shapes, shape s sorting up to shape_keys(s) keys with shape_threads(s) threads,
// so that a group of a hundred is not padded to thousands: 256, 1024 and 4096 were as
// fast as or faster than 512, 2048 and 4096 and than 512 and 4096 (kernels/NOTES.md,
// session 28).
constexpr int kShapes = 3;
__host__ __device__ constexpr uint32_t shape_keys(int s) {
  return s == 0 ? 256 : s == 1 ? 1024 : 4096;
}
constexpr int shape_threads(int s) { return s == 0 ? 64 : s == 1 ? 256 : 512; }
constexpr uint32_t kMediumGroup = shape_keys(kShapes - 1);
// The settle adds up the rotations in bigger groups over this many counters, so that
// few of its atomic additions meet on one word.
constexpr int kBigCounters = 32;

// What the settle counts for the next round, and sort_small_groups' lists of medium groups.
struct GroupCounts {
  // Rotations kept in groups of over kSmallGroup ([0]), and over each shape's keys.
  uint32_t over[kShapes + 1][kBigCounters];
  uint32_t listed[kShapes];  // medium groups listed for each shape
  // Cleared by the kernel that makes a round's keys, thread k: after the host read the
  // last settle's counts, before sort_small_groups lists and the settle counts anew.
  __device__ void clear(uint32_t k) {
    if (k < kBigCounters)
      for (auto& c : over) c[k] = 0;
    if (k < kShapes) listed[k] = 0;
  }
  // Where a group of `size` over kSmallGroup ends: counts it (counter c) where it is.
  __device__ void add(uint32_t size, uint32_t c) {
    atomicAdd(&over[0][c], size);
    for (int s = 0; s < kShapes; s++)
      if (size > shape_keys(s)) atomicAdd(&over[s + 1][c], size);
  }
};
// A round on dense numbers sorts at most this many ranks' worth of prefix at once.
constexpr int kMaxTuple = 4;
// Rounds of a batch that may have fewer groups than this look for dense numbers.
constexpr uint32_t kFewGroups = 1u << 17;

// The batch's alphabet: which byte values occur (seen[c] set to 1), 16 bytes a load.
// Each lane of a warp marks its own copy, so that no two lanes' writes share a bank.
__global__ void mark_alphabet(const uint8_t* text, uint32_t total, uint32_t* seen) {
  __shared__ uint32_t here[kThreads][32];  // kThreads == 256: a byte value a thread
  const uint32_t lane = threadIdx.x % 32;
  // A thread's row, read and cleared from its lane on, also keeps to one bank a lane.
  for (uint32_t c = 0; c < 32; c++) here[threadIdx.x][(c + lane) % 32] = 0;
  __syncthreads();
  const uint32_t stride = gridDim.x * kThreads, first = blockIdx.x * kThreads + threadIdx.x;
  const uint4* words = reinterpret_cast<const uint4*>(text);  // cudaMalloc'd: aligned
  for (uint32_t w = first; w < total / 16; w += stride) {
    const uint4 v = words[w];
    for (uint32_t x : {v.x, v.y, v.z, v.w})
      for (int byte = 0; byte < 4; byte++) here[x >> 8 * byte & 0xFF][lane] = 1;
  }
  for (uint32_t i = total / 16 * 16 + first; i < total; i += stride) here[text[i]][lane] = 1;
  __syncthreads();
  uint32_t any = 0;
  for (uint32_t c = 0; c < 32; c++) any |= here[threadIdx.x][(c + lane) % 32];
  if (any) seen[threadIdx.x] = 1;
}

// Numbers the bytes seen in byte order (code[c]) and finds how many the first sort's key
// holds as digits in `bits` bits: info = {base, digits}, the base being the number of
// bytes seen (2 where one is). Clears `seen` for the next batch. One block of 256 threads.
__global__ void number_alphabet(uint32_t* seen, int bits, uint32_t* code, uint32_t* info) {
  __shared__ uint32_t count[kThreads];
  const uint32_t c = threadIdx.x;
  count[c] = seen[c];
  seen[c] = 0;
  __syncthreads();
  for (uint32_t step = 1; step < kThreads; step *= 2) {  // inclusive prefix sum
    const uint32_t add = c >= step ? count[c - step] : 0;
    __syncthreads();
    count[c] += add;
    __syncthreads();
  }
  code[c] = c ? count[c - 1] : 0;
  if (c == kThreads - 1) {
    const uint64_t base = count[c] < 2 ? 2 : count[c], room = uint64_t(1) << bits;
    uint32_t digits = 1;
    for (uint64_t span = base; span <= room / base; span *= base) digits++;
    info[0] = uint32_t(base);
    info[1] = digits;
  }
}

// Key: the block id, the rotation's first bytes (read cyclically) as digits (alphabet:
// number_alphabet's code and info) in the `bits` bits below it, and below them its
// position in the block (`shift` bits), which the sort carries along unsorted.
__global__ void initial_keys(const uint8_t* text, const uint32_t* start, uint32_t nblocks,
                             uint32_t total, const uint32_t* code, const uint32_t* alphabet,
                             int bits, int shift, uint64_t* keys, GroupCounts* counts) {
  __shared__ uint32_t digit[kThreads];
  if (blockIdx.x == 0) counts->clear(threadIdx.x);
  digit[threadIdx.x] = code[threadIdx.x];
  __syncthreads();
  uint32_t i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= total) return;
  const uint32_t base = alphabet[0], digits = alphabet[1];
  uint32_t b = block_of(start, nblocks, i);
  uint32_t s = start[b], n = start[b + 1] - s, j = i - s;
  uint64_t value = 0;
  if (j + digits <= n) {
    for (uint32_t c = 0; c < digits; c++) value = value * base + digit[text[i + c]];
  } else {
    for (uint32_t c = 0; c < digits; c++) value = value * base + digit[text[s + (j + c) % n]];
  }
  keys[i] = (uint64_t(b) << bits | value) << shift | j;
}

// An active rotation as the compacted set holds it, in sorted-position order: its group's
// rank, its sorted position less that rank, and its position in its block. Carrying the
// rank saves a scattered read of it each round.
__device__ uint64_t pack_active(uint32_t rank, uint32_t pos, uint32_t in_block) {
  return uint64_t(rank) << (2 * kBlockBits) | uint64_t(pos - rank) << kBlockBits | in_block;
}
struct Active {
  uint32_t group, past, in_block;  // rank, sorted position less it, position in the block
  __device__ explicit Active(uint64_t e) {
    const uint32_t mask = (uint32_t(1) << kBlockBits) - 1;
    group = uint32_t(e >> (2 * kBlockBits));
    past = uint32_t(e >> kBlockBits) & mask;
    in_block = uint32_t(e) & mask;
  }
};

// Dense group numbers. Every sorted position is a rank (a final rotation's, or its group's
// first) but those of an active group past its first: flags set to 1 over the batch,
// cleared here at those, and summed before each position give every rank a number, in
// order. (A periodic block's dropped groups keep numbers no rank uses: the order holds.)
__global__ void clear_inner(const uint64_t* packed, uint32_t m, uint8_t* flags) {
  const uint32_t k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= m) return;
  const Active a(packed[k]);
  if (a.past) flags[a.group + a.past] = 0;
}

// How many numbers there are, and the most one block's range of sorted positions has.
// One thread block.
__global__ void count_numbers(const uint32_t* dense, const uint32_t* start, uint32_t nblocks,
                              uint32_t total, uint32_t* groups, uint32_t* most_in_block) {
  __shared__ uint32_t most;
  if (threadIdx.x == 0) most = 0;
  __syncthreads();
  for (uint32_t b = threadIdx.x; b < nblocks; b += kThreads)
    atomicMax(&most, dense[start[b + 1]] - dense[start[b]]);
  __syncthreads();
  if (threadIdx.x == 0) {
    *groups = dense[total];
    *most_in_block = most;
  }
}

// A round's ranks as its keys hold them: the ranks themselves (sorted positions), or
// their dense numbers (count_groups), which take fewer bits where groups are few.
struct RankItself {
  __device__ uint32_t operator()(uint32_t rank) const { return rank; }
};
struct DenseNumber {
  const uint32_t* dense;
  __device__ uint32_t operator()(uint32_t rank) const { return dense[rank]; }
};

// Key of an active rotation for a round that sorts the prefix from h to t * h: its
// group's number, the numbers of the ranks h, 2h, ... (t - 1) h further on counted from
// its block's first (`bits` each), and, unsorted below, its position in the block (keys
// alone move a third fewer bytes than key-value pairs). A doubling round takes the ranks
// themselves and t = 2; where a batch has few groups (long repeats' first rounds), dense
// numbers fit t up to kMaxTuple in a key no longer.
template <class Number>
__global__ void round_keys(const uint64_t* packed, uint32_t m, const uint32_t* rank,
                           Number number, const uint32_t* start, uint32_t nblocks, uint32_t h,
                           int t, int bits, int shift, uint64_t* keys, uint32_t* pos,
                           GroupCounts* counts) {
  uint32_t k = blockIdx.x * kThreads + threadIdx.x;
  counts->clear(k);
  if (k >= m) return;
  const Active a(packed[k]);
  uint32_t b = block_of(start, nblocks, a.group);
  uint32_t s = start[b], n = start[b + 1] - s, j = a.in_block;
  const uint32_t first = number(s);
  uint64_t key = number(a.group);
  for (int c = 1; c < t; c++) {
    j += h;  // h < n: the block is longer than the prefix sorted so far
    if (j >= n) j -= n;
    key = key << bits | (number(rank[s + j]) - first);
  }
  keys[k] = key << shift | a.in_block;
  pos[k] = a.group + a.past;
}

// A doubling round's keys (round_keys', in the active set's order: groups whole, in order) put
// in order where their group is small: a key's place is its group's start plus the
// number of the group's keys below it (keys are distinct: they end in the position).
// Where the round has bigger groups (`bigger`), a medium group's first key lists it for
// sort_medium_groups (`list`: one list of `list_room` entries a block shape), and keys of
// large groups are marked (in_large[k] = 1) for the radix sort; in_large is null where
// the round has none.
__global__ void sort_small_groups(const uint64_t* __restrict__ keys, const uint32_t* pos,
                                  uint32_t m, int shift, uint64_t* sorted, bool bigger,
                                  uint8_t* in_large, uint32_t* list, uint32_t list_room,
                                  GroupCounts* counts) {
  const uint32_t k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= m) return;
  const uint64_t key = keys[k];
  const uint32_t group = uint32_t(key >> 2 * shift);
  const uint32_t first = k - (pos[k] - group);
  if (bigger) {
    auto in_group = [&](uint32_t at) { return at < m && uint32_t(keys[at] >> 2 * shift) == group; };
    const bool large = in_group(first + kMediumGroup);
    if (in_large) in_large[k] = large;
    if (in_group(first + kSmallGroup)) {
      if (!large && k == first) {
        int shape = 0;
        while (in_group(first + shape_keys(shape))) shape++;
        list[shape * list_room + atomicAdd(&counts->listed[shape], 1)] = first;
      }
      return;
    }
  }
  uint32_t below = 0;
  for (uint32_t j = first; j < m; j++) {
    const uint64_t other = keys[j];
    if (uint32_t(other >> 2 * shift) != group) break;
    below += other < key;
  }
  sorted[first + below] = key;
}

// Medium groups (sort_small_groups' list for this block shape), one at a time a thread
// block: its keys, padded with ones, sorted on the rank h further on (their group bits are
// equal), written back in place. Keys past the group's end read as padding. The padding's
// rank field is at least any rank in a block; the sort is stable and the keys are read
// in order (blocked), so the padding stays last.
template <int kBlock, int kItems>
__global__ void __launch_bounds__(kBlock)
    sort_medium_groups(const uint64_t* __restrict__ keys, uint32_t m, int shift,
                       const uint32_t* list, const uint32_t* listed, uint64_t* sorted) {
  using Sort = cub::BlockRadixSort<uint64_t, kBlock, kItems>;
  __shared__ typename Sort::TempStorage temp;
  constexpr uint64_t kPad = ~uint64_t(0);
  const uint32_t groups = *listed;
  for (uint32_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const uint32_t first = list[g];
    const uint32_t group = uint32_t(keys[first] >> 2 * shift);
    uint64_t item[kItems];
    for (int i = 0; i < kItems; i++) {
      const uint32_t k = first + threadIdx.x * kItems + uint32_t(i);
      const uint64_t key = k < m ? keys[k] : kPad;
      item[i] = uint32_t(key >> 2 * shift) == group ? key : kPad;
    }
    Sort(temp).SortBlockedToStriped(item, shift, 2 * shift);
    for (int i = 0; i < kItems; i++)
      if (item[i] != kPad) sorted[first + uint32_t(i * kBlock) + threadIdx.x] = item[i];
    __syncthreads();  // temp is reused for the next group
  }
}

// The keys of large groups, gathered from their places (at[t], increasing) for the radix
// sort, and its sorted keys put back in those places: large groups keep their places, and
// sorting keeps them in order.
__global__ void gather_keys(const uint64_t* keys, const uint32_t* at, uint32_t count,
                            uint64_t* out) {
  const uint32_t t = blockIdx.x * kThreads + threadIdx.x;
  if (t < count) out[t] = keys[at[t]];
}
__global__ void scatter_keys(const uint64_t* keys, const uint32_t* at, uint32_t count,
                             uint64_t* out) {
  const uint32_t t = blockIdx.x * kThreads + threadIdx.x;
  if (t < count) out[at[t]] = keys[t];
}

// A sorted round as settling reads it: 64-bit keys whose low `shift` bits hold the
// rotation's position in its block. Equal keys above the low bits form a group, and the
// bits from `block_shift` up tell the block: its id (first sort), or (by_rank, doubling
// rounds) a position in it, the group's rank before the round. The first sort's k-th key
// is at sorted position k, a doubling round's at pos[k]; a round on dense numbers finds
// the block from that position (a block's rotations keep to its range).
struct SortedRound {
  const uint64_t* keys;
  int shift, block_shift;
  bool by_rank;
  const uint32_t* start;
  uint32_t nblocks;
  const uint32_t* pos;
  __device__ bool head(uint32_t k) const {
    return k == 0 || keys[k] >> shift != keys[k - 1] >> shift;
  }
  __device__ uint32_t sorted_pos(uint32_t k) const { return pos ? pos[k] : k; }
  __device__ uint32_t block(uint32_t k) const {
    if (by_rank) return block_of(start, nblocks, uint32_t(keys[k] >> block_shift));
    if (pos) return block_of(start, nblocks, pos[k]);
    // A batch of one block has no id bits: block_shift is 64.
    return block_shift >= 64 ? 0 : uint32_t(keys[k] >> block_shift);
  }
  __device__ uint32_t in_block(uint32_t k) const {
    return uint32_t(keys[k] & ((uint64_t(1) << shift) - 1));
  }
  __device__ uint32_t old_rank(uint32_t k) const {
    return by_rank ? uint32_t(keys[k] >> block_shift) : kNoRank;
  }
};

// Settling a sorted round starts with a scan over it: each rotation carries its sorted
// position if it heads a group (a max-scan of those gives every rotation its group's head,
// its new rank) and whether it stays active (a sum of those gives its place in the
// compacted active set). The two travel in one 64-bit word, the head above: CUB's scan
// hands an integer from tile to tile in one step, where a struct takes a slower path.
using Settled = uint64_t;

// What the host reads back after each settle: the scan's total, from the first sort on
// the batch's alphabet ({base, digits}, number_alphabet's), how many of the kept
// rotations are in groups past each size (and, unused by the host, the medium groups
// sort_small_groups listed), and how many keys of large groups the round's select found
// (the same, or the round's keys were put in the wrong places): one copy for all.
struct Readback {
  Settled tail;
  uint32_t alphabet[2];
  GroupCounts counts;
  uint32_t selected;           // keys of large groups the round's select found
  uint32_t groups;             // numbers of ranks (count_groups), in the batch
  uint32_t groups_in_block;    // and the most in one block
};

__device__ Settled settled(uint32_t head, bool kept) { return uint64_t(head) << 32 | kept; }
__device__ uint32_t head_of(Settled v) { return uint32_t(v >> 32); }
__device__ uint32_t kept_of(Settled v) { return uint32_t(v); }

struct CombineSettled {
  __device__ Settled operator()(Settled a, Settled b) const {
    return (a > b ? a : b) >> 32 << 32 | (kept_of(a) + kept_of(b));
  }
};

struct Round {
  SortedRound sorted;
  uint32_t m, covered, shortest;
  const uint8_t* text;
  uint32_t* rank;
  uint8_t *last, *periodic;
  uint32_t* orig_ptr;
  uint64_t* active;
  GroupCounts* counts;

  __device__ uint32_t sorted_pos(uint32_t k) const { return sorted.sorted_pos(k); }
  __device__ bool single(uint32_t k) const {
    return sorted.head(k) && (k + 1 == m || sorted.head(k + 1));
  }
  // A group that spans a whole rotation holds equal rotations: its block is periodic.
  // Only blocks no longer than the prefix sorted so far can be: most rounds skip the
  // search for the block.
  __device__ bool spans_block(uint32_t b) const {
    return covered >= sorted.start[b + 1] - sorted.start[b];
  }
  __device__ bool spans(uint32_t k) const {
    return covered >= shortest && spans_block(sorted.block(k));
  }
};

struct SettleInput {
  Round r;
  __device__ Settled operator()(uint32_t k) const {
    bool kept = !r.single(k) && !r.spans(k);
    return settled(r.sorted.head(k) ? r.sorted_pos(k) : 0, kept);
  }
};

// The scan's output step. New ranks; final rotations write their L byte (and origPtr) and
// drop out; groups that span a whole rotation mark their block periodic and drop out too;
// the rest go into the active set, in sorted order. The last rotation leaves the scan's
// total in `tail`.
struct SettleOutput {
  Round r;
  Settled* tail;
  __device__ void operator()(ptrdiff_t index, Settled v) const {
    const uint32_t k = uint32_t(index);
    const uint32_t b = r.sorted.block(k), s = r.sorted.start[b], n = r.sorted.start[b + 1] - s;
    const uint32_t j = r.sorted.in_block(k), i = s + j, p = r.sorted_pos(k);
    // Most ranks stay as they were (a group that does not split, the first part of one
    // that does): those scattered writes are skipped.
    const uint32_t head = head_of(v);
    if (head != r.sorted.old_rank(k)) r.rank[i] = head;
    if (r.single(k)) {
      r.last[p] = r.text[j == 0 ? s + n - 1 : i - 1];
      if (j == 0) r.orig_ptr[b] = p - s;
    } else if (r.spans_block(b)) {
      r.periodic[b] = 1;
    } else {
      r.active[kept_of(v) - 1] = pack_active(head, p, j);
      // A group's last rotation counts it, for the next round's choice of sorts.
      const uint32_t size = p - head + 1;
      if ((k + 1 == r.m || r.sorted.head(k + 1)) && size > kSmallGroup)
        r.counts->add(size, k % kBigCounters);
    }
    if (k + 1 == r.m) *tail = v;
  }
};

struct Widen {
  __device__ uint32_t operator()(uint8_t x) const { return x; }
};

}  // namespace

struct GpuBwt::Impl {
  explicit Impl(int d) : device(d), mem(d) {}
  int device = 0;
  size_t max_bytes = 0;
  uint32_t max_blocks = 0;
  GpuMemory mem;
  cudaStream_t stream = nullptr;

  uint8_t *text, *last, *periodic;
  // keys[]: sort keys and the packed active set. A round's keys go into the one the
  // active set is not in, and the sorted keys into either (the radix sort's choice, or
  // the active set's where small groups are sorted in place); settling writes the new
  // active set into the half the sorted keys are not in.
  uint64_t* keys[2];
  uint32_t *start, *orig_ptr, *rank, *pos;
  // A round's large groups: which keys are in one, where those lie, and their keys
  // gathered for the radix sort. Its medium groups: where each starts, a list a block
  // shape (medium_room entries each).
  uint8_t* in_large;
  uint32_t* large_at;
  uint64_t* large_keys;
  uint32_t* medium;
  uint32_t medium_room = 0;
  Readback* readback;
  // The batch's alphabet: bytes seen and their numbers (digits).
  uint32_t *seen, *code;
  // The move-to-front step: chunks per block, its tables, positions and bytes in use.
  uint32_t* chunk_start;
  int32_t* mtf_table;
  uint8_t *mtf, *in_use;
  void* temp;
  size_t temp_bytes = 0;
  GpuBwt::Stats stats;
  // h_bytes: the batch's text on the way in, its last column (or move-to-front
  // positions) on the way out. One pinned buffer serves both, as the download follows
  // the upload on the same stream: 6 MiB a lane less of memory that cannot be paged.
  uint8_t *h_bytes, *h_periodic;
  uint32_t *h_start, *h_orig_ptr, *h_chunk_start;
  uint8_t* h_in_use;
  Readback* h_readback;

  ~Impl() {
    // Errors here only mean the device is already gone; mem frees the buffers after.
    cudaSetDevice(device);
    if (stream) cudaStreamSynchronize(stream);
    if (stream) cudaStreamDestroy(stream);
  }

  // Each CUB call asks how much scratch it needs: with temp null it only answers, which
  // sizes the one scratch area for the largest batch.
  size_t radix_sort(cub::DoubleBuffer<uint64_t>& k, uint32_t m, int begin_bit, int end_bit,
                    void* scratch) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(scratch, bytes, k, m, begin_bit, end_bit, stream));
    return bytes;
  }
  size_t select_large(uint32_t m, void* scratch) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceSelect::Flagged(scratch, bytes, thrust::counting_iterator<uint32_t>(0),
                                          in_large, large_at, &readback->selected, m, stream));
    return bytes;
  }
  // Dense group numbers (clear_inner) for the batch's `total` sorted positions: the flags
  // in in_large, the numbers in large_at (both free in a round that radix-sorts all its
  // keys), how many there are and the most in one block in the readback.
  size_t number_groups(uint32_t total, void* scratch) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
        scratch, bytes, thrust::make_transform_iterator(in_large, Widen{}), large_at, total + 1,
        stream));
    return bytes;
  }
  void count_groups(const uint64_t* active, uint32_t m, uint32_t total, uint32_t nb) {
    CUDA_CHECK(cudaMemsetAsync(in_large, 1, total, stream));
    CUDA_CHECK(cudaMemsetAsync(in_large + total, 0, 1, stream));
    clear_inner<<<grid_for(m), kThreads, 0, stream>>>(active, m, in_large);
    CUDA_CHECK(cudaGetLastError());
    number_groups(total, temp);
    count_numbers<<<1, kThreads, 0, stream>>>(large_at, start, nb, total, &readback->groups,
                                              &readback->groups_in_block);
    CUDA_CHECK(cudaGetLastError());
    read_back();
  }
  size_t settle_scan(const Round& r, void* scratch) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceScan::InclusiveScan(
        scratch, bytes,
        thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0), SettleInput{r}),
        thrust::make_tabulate_output_iterator(SettleOutput{r, &readback->tail}), CombineSettled{}, r.m,
        stream));
    return bytes;
  }
  // A round for the rotations of `sorted` (m of them), writing the new active set to
  // `active`.
  Round round(SortedRound sorted, uint32_t m, uint32_t covered, uint32_t shortest,
              uint64_t* active) {
    return Round{sorted, m,        covered,  shortest, text,
                 rank,   last,     periodic, orig_ptr, active, &readback->counts};
  }
  // The medium groups sort_small_groups listed, shape by shape: a thread block a group,
  // as many blocks as there may be groups of the shape (the keys over[S] - over[S + 1],
  // as the last settle counted them; a block takes the next group where there are more).
  template <int... S>
  void sort_medium(std::integer_sequence<int, S...>, const uint64_t* keys, uint32_t m,
                   int shift, const std::array<uint32_t, kShapes + 1>& over, uint64_t* sorted) {
    (sort_medium_shape<S>(keys, m, shift, over[S] - over[S + 1], sorted), ...);
  }
  template <int S>
  void sort_medium_shape(const uint64_t* keys, uint32_t m, int shift, uint32_t count,
                         uint64_t* sorted) {
    constexpr int kBlock = shape_threads(S);
    static_assert(shape_keys(S) % kBlock == 0);
    if (count == 0) return;
    constexpr uint32_t kMostBlocks = 4096;
    constexpr uint32_t kSmallest = S == 0 ? kSmallGroup + 1 : shape_keys(S - 1) + 1;
    sort_medium_groups<kBlock, shape_keys(S) / kBlock>
        <<<std::min(kMostBlocks, count / kSmallest + 1), kBlock, 0, stream>>>(
            keys, m, shift, medium + size_t(S) * medium_room, readback->counts.listed + S,
            sorted);
    CUDA_CHECK(cudaGetLastError());
  }
  void read_back() {
    CUDA_CHECK(
        cudaMemcpyAsync(h_readback, readback, sizeof(Readback), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  // Settles a round (ranks, final rotations, the new active set) and returns the size of
  // the active set.
  uint32_t settle_round(const Round& r) {
    settle_scan(r, temp);
    read_back();
    return uint32_t(h_readback->tail);
  }
};

GpuBwt::GpuBwt(int device, size_t max_bytes, uint32_t max_blocks) : impl_(new Impl(device)) {
  Impl& g = *impl_;
  // A doubling round's key holds a rank in the batch and two positions in a block.
  if (max_bytes > (size_t(1) << (64 - 2 * kBlockBits))) throw GpuError("batch too large");
  g.max_bytes = max_bytes;
  g.max_blocks = max_blocks;
  CUDA_CHECK(cudaSetDevice(device));
  // Lanes wait on their streams; spinning there would take cores from the CPU stations.
  // Refused once the device is in use, which leaves whatever the first lane set.
  if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) cudaGetLastError();
  CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  size_t n = max_bytes;
  g.text = g.mem.device<uint8_t>(n);
  g.last = g.mem.device<uint8_t>(n);
  g.rank = g.mem.device<uint32_t>(n);
  g.pos = g.mem.device<uint32_t>(n);
  // One more each for the dense numbers' total.
  g.in_large = g.mem.device<uint8_t>(n + 1);
  g.large_at = g.mem.device<uint32_t>(n + 1);
  g.large_keys = g.mem.device<uint64_t>(n);
  g.medium_room = uint32_t(n / (kSmallGroup + 1) + 1);
  g.medium = g.mem.device<uint32_t>(kShapes * size_t(g.medium_room));
  g.readback = g.mem.device<Readback>(1);
  g.seen = g.mem.device<uint32_t>(256);
  CUDA_CHECK(cudaMemsetAsync(g.seen, 0, 256 * sizeof(uint32_t), g.stream));
  g.code = g.mem.device<uint32_t>(256);
  for (int b = 0; b < 2; b++) {
    g.keys[b] = g.mem.device<uint64_t>(n);
  }
  g.start = g.mem.device<uint32_t>(max_blocks + 1);
  g.orig_ptr = g.mem.device<uint32_t>(max_blocks);
  g.periodic = g.mem.device<uint8_t>(max_blocks);
  g.chunk_start = g.mem.device<uint32_t>(max_blocks + 1);
  g.mtf_table = g.mem.device<int32_t>(mtf_table_entries(n, max_blocks));
  g.mtf = g.mem.device<uint8_t>(n);
  g.in_use = g.mem.device<uint8_t>(size_t(max_blocks) * 256);
  g.h_chunk_start = g.mem.host<uint32_t>(max_blocks + 1);
  g.h_in_use = g.mem.host<uint8_t>(size_t(max_blocks) * 256);
  g.h_bytes = g.mem.host<uint8_t>(n);
  g.h_start = g.mem.host<uint32_t>(max_blocks + 1);
  g.h_orig_ptr = g.mem.host<uint32_t>(max_blocks);
  g.h_periodic = g.mem.host<uint8_t>(max_blocks);
  g.h_readback = g.mem.host<Readback>(1);

  // One scratch area for all CUB calls, sized for the largest batch.
  const uint32_t m = uint32_t(n);
  cub::DoubleBuffer<uint64_t> k(g.keys[0], g.keys[1]);
  const Round largest = g.round(SortedRound{}, m, 0, 0, g.keys[0]);
  g.temp_bytes = std::max({g.radix_sort(k, m, 0, 64, nullptr), g.settle_scan(largest, nullptr),
                           g.select_large(m, nullptr), g.number_groups(m, nullptr)});
  g.temp = g.mem.device<uint8_t>(g.temp_bytes);
}

GpuBwt::~GpuBwt() = default;

size_t GpuBwt::max_bytes() const { return impl_->max_bytes; }
uint32_t GpuBwt::max_blocks() const { return impl_->max_blocks; }
const GpuBwt::Stats& GpuBwt::stats() const { return impl_->stats; }

void GpuBwt::sort(const std::vector<BlockView>& blocks, std::vector<std::optional<BwtResult>>& out,
                  bool move_to_front) {
  Impl& g = *impl_;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  g.stats = {};
  out.assign(blocks.size(), std::nullopt);
  // Empty blocks have no rotations to sort; the rest go into the batch back to back.
  std::vector<size_t> member;
  uint32_t total = 0, longest = 1, shortest = ~0u;
  for (size_t i = 0; i < blocks.size(); i++) {
    const BlockView& blk = blocks[i];
    if (blk.size == 0) continue;
    if (member.size() == g.max_blocks || total + blk.size > g.max_bytes)
      throw GpuError("batch larger than reserved");
    g.h_start[member.size()] = total;
    std::memcpy(g.h_bytes + total, blk.data, blk.size);
    total += uint32_t(blk.size);
    longest = std::max(longest, uint32_t(blk.size));
    shortest = std::min(shortest, uint32_t(blk.size));
    member.push_back(i);
  }
  if (member.empty()) return;
  if (longest > (uint32_t(1) << kBlockBits)) throw GpuError("block too large");
  const uint32_t nb = uint32_t(member.size());
  g.h_start[nb] = total;

  CUDA_CHECK(cudaSetDevice(g.device));
  CUDA_CHECK(cudaMemcpyAsync(g.text, g.h_bytes, total, cudaMemcpyHostToDevice, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.start, g.h_start, (nb + 1) * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, g.stream));
  CUDA_CHECK(cudaMemsetAsync(g.periodic, 0, nb, g.stream));

  // First round: the block id, and as many leading bytes as fit as digits in the batch's
  // alphabet in the bits above the rotation's position in its block (`shift` bits,
  // carried along unsorted). A small alphabet saves doubling rounds: 10 bytes a key for
  // DNA, 20 for a perturbed binary word, instead of 5.
  const int shift = bit_width(longest - 1);
  const int block_bits = bit_width(nb - 1);
  const int bits = std::min(kMaxKeyBits, 64 - shift - block_bits);
  mark_alphabet<<<std::min(grid_for(total), kAlphabetGrid), kThreads, 0, g.stream>>>(g.text, total,
                                                                                    g.seen);
  uint32_t* alphabet = g.readback->alphabet;
  number_alphabet<<<1, kThreads, 0, g.stream>>>(g.seen, bits, g.code, alphabet);
  CUDA_CHECK(cudaGetLastError());
  // The key's length decides the first settle only where a block may be no longer than
  // it (its rotations then all compare equal); otherwise the host learns it with the
  // settle's count rather than waiting for it here.
  const bool may_span = shortest <= uint32_t(kMaxKeyBits);
  if (may_span) g.read_back();
  cub::DoubleBuffer<uint64_t> k(g.keys[0], g.keys[1]);
  initial_keys<<<grid_for(total), kThreads, 0, g.stream>>>(
      g.text, g.start, nb, total, g.code, alphabet, bits, shift, k.Current(), &g.readback->counts);
  CUDA_CHECK(cudaGetLastError());
  g.radix_sort(k, total, shift, 64, g.temp);
  uint64_t* active = k.Alternate();
  uint32_t m = g.settle_round(
      g.round(SortedRound{k.Current(), shift, shift + bits, false, g.start, nb, nullptr}, total,
              may_span ? g.h_readback->alphabet[1] : 0, shortest, active));
  uint32_t covered = g.h_readback->alphabet[1];
  g.stats.first_key_bytes = int(covered);
  g.stats.bytes = total;
  g.stats.keys_sorted = total;
  g.stats.first_seconds = seconds();

  // Doubling rounds: the active set sorted on (group, rank h further on): small groups
  // where they lie, medium ones a thread block each, the radix sort taking only the keys
  // of large groups, and all keys where over 3/4 are (gathering and putting back the keys
  // then costs more than the rest save).
  const int end_bit = 2 * shift + bit_width(total - 1);
  bool try_dense = true;
  while (m > 0) {
    g.stats.rounds++;
    g.stats.keys_sorted += m;
    // Keys in groups over kSmallGroup ([0]) and over each shape's keys.
    std::array<uint32_t, kShapes + 1> over{};
    for (int s = 0; s <= kShapes; s++)
      for (uint32_t c : g.h_readback->counts.over[s]) over[size_t(s)] += c;
    const uint32_t big = over[0], large = over[kShapes];
    const uint32_t h = covered;
    uint64_t* keys = active == g.keys[0] ? g.keys[1] : g.keys[0];
    // Where nearly all keys are in big groups, the groups may be few enough to number
    // densely: then t ranks (prefixes of t * h) fit a key in fewer bits than two.
    int t = 2, group_bits = 0, dense_bits = 0;
    // Groups number at least the final rotations and the small groups' share: numbering
    // them costs a pass over the batch, so only where they may be few.
    const uint32_t fewest = (total - m) + (m - big) / kSmallGroup;
    if (try_dense && big > m / 4 * 3 && m > total / 2 && fewest < kFewGroups) {
      g.count_groups(active, m, total, nb);
      const int group_field = std::max(1, bit_width(g.h_readback->groups - 1));
      const int field = std::max(1, bit_width(g.h_readback->groups_in_block - 1));
      const int fit = std::min(kMaxTuple, 1 + (64 - shift - group_field) / field);
      // Two ranks pay only where their key saves two radix passes.
      auto passes = [](int key_bits) { return (key_bits + 7) / 8; };
      if (fit > 2 || (fit == 2 && passes(group_field + field) + 2 <= passes(end_bit - shift))) {
        t = fit;
        group_bits = group_field;
        dense_bits = field;
        // A round of two ranks had under a rank's worth of room; with the groups grown
        // by its doubling the next count would almost surely give no such round.
        if (fit == 2) try_dense = false;
      } else {
        try_dense = false;  // groups only grow
      }
    }
    covered *= uint32_t(t);
    if (dense_bits)
      round_keys<<<grid_for(m), kThreads, 0, g.stream>>>(active, m, g.rank, DenseNumber{g.large_at},
                                                        g.start, nb, h, t, dense_bits, shift,
                                                        keys, g.pos, &g.readback->counts);
    else
      round_keys<<<grid_for(m), kThreads, 0, g.stream>>>(active, m, g.rank, RankItself{}, g.start,
                                                        nb, h, 2, shift, shift, keys, g.pos,
                                                        &g.readback->counts);
    CUDA_CHECK(cudaGetLastError());
    // The active set was read: its buffer is free for the sorted keys.
    uint64_t* sorted = active;
    bool selected = false;
    // Dense keys hold no rank for sort_small_groups: their rounds radix-sort every key.
    if (dense_bits || large > m / 4 * 3) {
      cub::DoubleBuffer<uint64_t> k64(keys, active);
      g.radix_sort(k64, m, shift, dense_bits ? shift + group_bits + (t - 1) * dense_bits : end_bit,
                   g.temp);
      sorted = k64.Current();
    } else {
      sort_small_groups<<<grid_for(m), kThreads, 0, g.stream>>>(
          keys, g.pos, m, shift, sorted, big > 0, large > 0 ? g.in_large : nullptr, g.medium,
          g.medium_room, &g.readback->counts);
      CUDA_CHECK(cudaGetLastError());
      g.sort_medium(std::make_integer_sequence<int, kShapes>{}, keys, m, shift, over, sorted);
      if (large > 0) {
        selected = true;
        g.select_large(m, g.temp);
        gather_keys<<<grid_for(large), kThreads, 0, g.stream>>>(keys, g.large_at, large,
                                                               g.large_keys);
        CUDA_CHECK(cudaGetLastError());
        // The round's keys are all read: their buffer is the radix sort's other half.
        cub::DoubleBuffer<uint64_t> kb(g.large_keys, keys);
        g.radix_sort(kb, large, shift, end_bit, g.temp);
        scatter_keys<<<grid_for(large), kThreads, 0, g.stream>>>(kb.Current(), g.large_at,
                                                                large, sorted);
        CUDA_CHECK(cudaGetLastError());
      }
    }
    active = sorted == g.keys[0] ? g.keys[1] : g.keys[0];
    const SortedRound by{sorted, shift, 2 * shift, !dense_bits, g.start, nb, g.pos};
    m = g.settle_round(g.round(by, m, covered, shortest, active));
    // The settle counts large groups as sort_small_groups finds them: a mismatch would be
    // a bug, and the batch goes back to the CPU.
    if (selected && g.h_readback->selected != large) throw GpuError("large groups miscounted");
  }

  if (move_to_front) {
    uint32_t chunks = 0;
    for (uint32_t b = 0; b < nb; b++) {
      g.h_chunk_start[b] = chunks;
      chunks += (g.h_start[b + 1] - g.h_start[b] + kMtfChunk - 1) / kMtfChunk;
    }
    g.h_chunk_start[nb] = chunks;
    CUDA_CHECK(cudaMemcpyAsync(g.chunk_start, g.h_chunk_start, (nb + 1) * sizeof(uint32_t),
                               cudaMemcpyHostToDevice, g.stream));
    CUDA_CHECK(gpbzip2::move_to_front(g.last, g.start, g.chunk_start, nb, chunks, g.mtf_table,
                                      g.in_use, g.mtf, g.stream));
    CUDA_CHECK(cudaMemcpyAsync(g.h_bytes, g.mtf, total, cudaMemcpyDeviceToHost, g.stream));
    CUDA_CHECK(cudaMemcpyAsync(g.h_in_use, g.in_use, size_t(nb) * 256, cudaMemcpyDeviceToHost,
                               g.stream));
  } else {
    CUDA_CHECK(cudaMemcpyAsync(g.h_bytes, g.last, total, cudaMemcpyDeviceToHost, g.stream));
  }
  CUDA_CHECK(cudaMemcpyAsync(g.h_orig_ptr, g.orig_ptr, nb * sizeof(uint32_t),
                             cudaMemcpyDeviceToHost, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.h_periodic, g.periodic, nb, cudaMemcpyDeviceToHost, g.stream));
  CUDA_CHECK(cudaStreamSynchronize(g.stream));
  for (uint32_t b = 0; b < nb; b++) {
    if (g.h_periodic[b]) continue;
    BwtResult& r = out[member[b]].emplace();
    // h_bytes holds the column or, with move_to_front, its positions.
    const uint8_t *from = g.h_bytes + g.h_start[b], *to = g.h_bytes + g.h_start[b + 1];
    if (uint8_t* result = blocks[member[b]].result)
      std::memcpy(result, from, size_t(to - from));
    else
      (move_to_front ? r.mtf : r.last).assign(from, to);
    if (move_to_front)
      for (int v = 0; v < 256; v++) r.in_use[size_t(v)] = g.h_in_use[size_t(b) * 256 + size_t(v)] != 0;
    r.orig_ptr = g.h_orig_ptr[b];
    r.moved_to_front = move_to_front;
  }
  g.stats.total_seconds = seconds();
}

}  // namespace gpbzip2
