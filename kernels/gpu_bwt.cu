// Rotation sort of a batch of blocks by prefix doubling with CUB radix sorts.
//
// All blocks of a batch are sorted as one array: a rotation is named by its global
// position i (block b holds positions start[b]..start[b+1]), and its rank is the global
// sorted position of the first member of its group (rotations with an equal prefix of
// the length sorted so far). The first sort keys on (b, leading bytes); each doubling
// round keys the rotations still in groups on (rank[i], rank[i+h] - start[b]) and sorts
// them; a rotation alone in its group is final: its L byte and, for i = start[b],
// origPtr are written right away and it leaves the active set (singleton elimination).
// A group that survives to a prefix of n bytes holds equal rotations: the block is
// periodic and goes back to the CPU, which reproduces bzip2's order for those.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cuda_check.h"
#include "gpu_bwt.h"

namespace gpbzip2 {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(uint32_t n) { return unsigned((n + kThreads - 1) / kThreads); }

// Bits needed to write x (bit_width, which C++17 lacks).
int bit_width(uint32_t x) { return x ? 32 - __builtin_clz(x) : 0; }

// The block holding global position i: start[] is strictly increasing, start[count] is
// the total.
__device__ uint32_t block_of(const uint32_t* start, uint32_t count, uint32_t i) {
  uint32_t lo = 0, hi = count;
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (start[mid] <= i) lo = mid;
    else hi = mid;
  }
  return lo;
}

// Key: the block id above the rotation's first `nbytes` bytes (read cyclically).
__global__ void initial_keys(const uint8_t* text, const uint32_t* start, uint32_t nblocks,
                             uint32_t total, int nbytes, uint64_t* keys, uint32_t* vals) {
  uint32_t i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= total) return;
  uint32_t b = block_of(start, nblocks, i);
  uint32_t s = start[b], n = start[b + 1] - s, j = i - s;
  uint64_t key = b;
  if (j + uint32_t(nbytes) <= n) {
    for (int c = 0; c < nbytes; c++) key = key << 8 | text[i + c];
  } else {
    for (int c = 0; c < nbytes; c++) key = key << 8 | text[s + (j + c) % n];
  }
  keys[i] = key;
  vals[i] = i;
}

// Key of an active rotation for the round that doubles the sorted prefix from h to 2h.
// `packed` holds (sorted position << 32 | rotation) in sorted-position order.
__global__ void doubling_keys(const uint64_t* packed, uint32_t m, const uint32_t* rank,
                              const uint32_t* start, uint32_t nblocks, uint32_t h, int shift,
                              uint64_t* keys, uint32_t* vals, uint32_t* pos) {
  uint32_t k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= m) return;
  uint64_t e = packed[k];
  uint32_t i = uint32_t(e), b = block_of(start, nblocks, i);
  uint32_t s = start[b], n = start[b + 1] - s, j = i - s + h;
  if (j >= n) j -= n;
  keys[k] = uint64_t(rank[i]) << shift | (rank[s + j] - s);
  vals[k] = i;
  pos[k] = uint32_t(e >> 32);
}

__device__ uint32_t sorted_pos(const uint32_t* pos, uint32_t k) { return pos ? pos[k] : k; }

// Group heads contribute their sorted position; a max-scan then gives each rotation
// the position of its group's head, its new rank. Read through an iterator, so the
// scan reads the keys itself and no flags array is written.
struct HeadPosition {
  const uint64_t* keys;
  const uint32_t* pos;
  __device__ uint32_t operator()(uint32_t k) const {
    bool head = k == 0 || keys[k] != keys[k - 1];
    return head ? sorted_pos(pos, k) : 0;
  }
};

auto head_positions(const uint64_t* keys, const uint32_t* pos) {
  return thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
                                         HeadPosition{keys, pos});
}

// New ranks; final rotations write their L byte (and origPtr) and drop out; groups that
// span a whole rotation mark their block periodic and drop out too.
__global__ void settle(const uint64_t* keys, const uint32_t* vals, const uint32_t* pos,
                       const uint32_t* group_head, uint32_t m, const uint8_t* text,
                       const uint32_t* start, uint32_t nblocks, uint32_t covered,
                       uint32_t* rank, uint8_t* last, uint32_t* orig_ptr, uint8_t* periodic,
                       uint64_t* packed, uint8_t* keep) {
  uint32_t k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= m) return;
  uint64_t key = keys[k];
  bool single = (k == 0 || key != keys[k - 1]) && (k + 1 == m || key != keys[k + 1]);
  uint32_t i = vals[k], p = sorted_pos(pos, k);
  rank[i] = group_head[k];
  uint32_t b = block_of(start, nblocks, i);
  uint32_t s = start[b], n = start[b + 1] - s;
  bool live = !single;
  if (single) {
    last[p] = text[i == s ? s + n - 1 : i - 1];
    if (i == s) orig_ptr[b] = p - s;
  } else if (covered >= n) {
    periodic[b] = 1;
    live = false;
  }
  keep[k] = live;
  packed[k] = uint64_t(p) << 32 | i;
}

template <typename T>
T* device_alloc(size_t count) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

template <typename T>
T* host_alloc(size_t count) {
  void* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, std::max<size_t>(count, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

}  // namespace

struct GpuBwt::Impl {
  int device = 0;
  size_t max_bytes = 0;
  uint32_t max_blocks = 0;
  cudaStream_t stream = nullptr;
  std::vector<void*> device_mem, host_mem;

  uint8_t *text, *last, *periodic, *keep;
  uint32_t *start, *orig_ptr, *rank, *vals[2], *pos, *scanned;
  uint64_t* keys[2];
  int* selected;
  void* temp;
  size_t temp_bytes = 0;
  GpuBwt::Stats stats;
  uint8_t *h_text, *h_last, *h_periodic;
  uint32_t *h_start, *h_orig_ptr;
  int* h_selected;

  template <typename T>
  T* dev(size_t count) {
    T* p = device_alloc<T>(count);
    device_mem.push_back(p);
    return p;
  }
  template <typename T>
  T* host(size_t count) {
    T* p = host_alloc<T>(count);
    host_mem.push_back(p);
    return p;
  }

  ~Impl() {
    // Errors here only mean the device is already gone.
    cudaSetDevice(device);
    if (stream) cudaStreamSynchronize(stream);
    for (void* p : device_mem) cudaFree(p);
    for (void* p : host_mem) cudaFreeHost(p);
    if (stream) cudaStreamDestroy(stream);
  }

  void sort_pairs(cub::DoubleBuffer<uint64_t>& k, cub::DoubleBuffer<uint32_t>& v, uint32_t m,
                  int end_bit) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, k, v, m, 0, end_bit, stream));
  }
  void max_scan(const uint64_t* keys, const uint32_t* positions, uint32_t m) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceScan::InclusiveScan(temp, bytes, head_positions(keys, positions),
                                              scanned, cuda::maximum<uint32_t>{}, m, stream));
  }
  uint32_t select(const uint64_t* in, uint64_t* out, uint32_t m) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceSelect::Flagged(temp, bytes, in, keep, out, selected, int64_t(m),
                                          stream));
    CUDA_CHECK(cudaMemcpyAsync(h_selected, selected, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return uint32_t(*h_selected);
  }
  // One round after a sort: ranks, final rotations, and the compacted active set, which
  // it leaves in the keys buffer the sort filled. Returns the active count.
  uint32_t settle_round(cub::DoubleBuffer<uint64_t>& k, cub::DoubleBuffer<uint32_t>& v,
                        const uint32_t* positions, uint32_t m, uint32_t nblocks,
                        uint32_t covered) {
    max_scan(k.Current(), positions, m);
    settle<<<grid_for(m), kThreads, 0, stream>>>(k.Current(), v.Current(), positions, scanned, m,
                                                 text, start, nblocks, covered, rank, last,
                                                 orig_ptr, periodic, k.Alternate(), keep);
    CUDA_CHECK(cudaGetLastError());
    return select(k.Alternate(), k.Current(), m);
  }
};

GpuBwt::GpuBwt(int device, size_t max_bytes, uint32_t max_blocks) : impl_(new Impl) {
  Impl& g = *impl_;
  if (max_bytes >= (size_t(1) << 31)) throw GpuError("batch too large");
  g.device = device;
  g.max_bytes = max_bytes;
  g.max_blocks = max_blocks;
  CUDA_CHECK(cudaSetDevice(device));
  // Lanes wait on their streams; spinning there would take cores from the CPU stations.
  // Refused once the device is in use, which leaves whatever the first lane set.
  if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) cudaGetLastError();
  CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  size_t n = max_bytes;
  g.text = g.dev<uint8_t>(n);
  g.last = g.dev<uint8_t>(n);
  g.keep = g.dev<uint8_t>(n);
  g.rank = g.dev<uint32_t>(n);
  g.pos = g.dev<uint32_t>(n);
  g.scanned = g.dev<uint32_t>(n);
  for (int b = 0; b < 2; b++) {
    g.vals[b] = g.dev<uint32_t>(n);
    g.keys[b] = g.dev<uint64_t>(n);
  }
  g.start = g.dev<uint32_t>(max_blocks + 1);
  g.orig_ptr = g.dev<uint32_t>(max_blocks);
  g.periodic = g.dev<uint8_t>(max_blocks);
  g.selected = g.dev<int>(1);
  g.h_text = g.host<uint8_t>(n);
  g.h_last = g.host<uint8_t>(n);
  g.h_start = g.host<uint32_t>(max_blocks + 1);
  g.h_orig_ptr = g.host<uint32_t>(max_blocks);
  g.h_periodic = g.host<uint8_t>(max_blocks);
  g.h_selected = g.host<int>(1);

  // One scratch area for the three CUB calls, sized for the largest batch.
  cub::DoubleBuffer<uint64_t> k(g.keys[0], g.keys[1]);
  cub::DoubleBuffer<uint32_t> v(g.vals[0], g.vals[1]);
  uint32_t m = uint32_t(n);
  size_t sort_bytes = 0, scan_bytes = 0, select_bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, k, v, m, 0, 64, g.stream));
  CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, scan_bytes, head_positions(g.keys[0], g.pos),
                                            g.scanned, cuda::maximum<uint32_t>{}, m, g.stream));
  CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, select_bytes, g.keys[0], g.keep, g.keys[1],
                                        g.selected, int64_t(m), g.stream));
  g.temp_bytes = std::max({sort_bytes, scan_bytes, select_bytes});
  g.temp = g.dev<uint8_t>(g.temp_bytes);
}

GpuBwt::~GpuBwt() = default;

size_t GpuBwt::max_bytes() const { return impl_->max_bytes; }
uint32_t GpuBwt::max_blocks() const { return impl_->max_blocks; }
const GpuBwt::Stats& GpuBwt::stats() const { return impl_->stats; }

void GpuBwt::sort(const std::vector<BlockView>& blocks, std::vector<std::optional<BwtResult>>& out) {
  Impl& g = *impl_;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  g.stats = {};
  out.assign(blocks.size(), std::nullopt);
  // Empty blocks have no rotations to sort; the rest go into the batch back to back.
  std::vector<size_t> member;
  uint32_t total = 0, longest = 1;
  for (size_t i = 0; i < blocks.size(); i++) {
    const BlockView& blk = blocks[i];
    if (blk.size == 0) continue;
    if (member.size() == g.max_blocks || total + blk.size > g.max_bytes)
      throw GpuError("batch larger than reserved");
    g.h_start[member.size()] = total;
    std::memcpy(g.h_text + total, blk.data, blk.size);
    total += uint32_t(blk.size);
    longest = std::max(longest, uint32_t(blk.size));
    member.push_back(i);
  }
  if (member.empty()) return;
  const uint32_t nb = uint32_t(member.size());
  g.h_start[nb] = total;

  CUDA_CHECK(cudaSetDevice(g.device));
  CUDA_CHECK(cudaMemcpyAsync(g.text, g.h_text, total, cudaMemcpyHostToDevice, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.start, g.h_start, (nb + 1) * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, g.stream));
  CUDA_CHECK(cudaMemsetAsync(g.periodic, 0, nb, g.stream));

  // First round: block id above as many leading bytes as fit in 64 bits.
  const int block_bits = bit_width(nb - 1);
  const int nbytes = (64 - block_bits) / 8;
  cub::DoubleBuffer<uint64_t> k(g.keys[0], g.keys[1]);
  cub::DoubleBuffer<uint32_t> v(g.vals[0], g.vals[1]);
  initial_keys<<<grid_for(total), kThreads, 0, g.stream>>>(g.text, g.start, nb, total, nbytes,
                                                           k.Current(), v.Current());
  CUDA_CHECK(cudaGetLastError());
  g.sort_pairs(k, v, total, block_bits + 8 * nbytes);
  uint32_t covered = uint32_t(nbytes);
  uint32_t m = g.settle_round(k, v, nullptr, total, nb, covered);
  g.stats.bytes = total;
  g.stats.keys_sorted = total;
  g.stats.first_seconds = seconds();

  // Doubling rounds: key = (group rank, rank h further on, local to the block).
  const int shift = bit_width(longest - 1);
  const int end_bit = shift + bit_width(total - 1);
  while (m > 0) {
    uint64_t* packed = k.Current();
    uint64_t* fresh = k.Alternate();
    doubling_keys<<<grid_for(m), kThreads, 0, g.stream>>>(packed, m, g.rank, g.start, nb, covered,
                                                         shift, fresh, g.vals[0], g.pos);
    CUDA_CHECK(cudaGetLastError());
    k = cub::DoubleBuffer<uint64_t>(fresh, packed);
    v = cub::DoubleBuffer<uint32_t>(g.vals[0], g.vals[1]);
    g.sort_pairs(k, v, m, end_bit);
    g.stats.rounds++;
    g.stats.keys_sorted += m;
    covered *= 2;
    m = g.settle_round(k, v, g.pos, m, nb, covered);
  }

  CUDA_CHECK(cudaMemcpyAsync(g.h_last, g.last, total, cudaMemcpyDeviceToHost, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.h_orig_ptr, g.orig_ptr, nb * sizeof(uint32_t),
                             cudaMemcpyDeviceToHost, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.h_periodic, g.periodic, nb, cudaMemcpyDeviceToHost, g.stream));
  CUDA_CHECK(cudaStreamSynchronize(g.stream));
  for (uint32_t b = 0; b < nb; b++) {
    if (g.h_periodic[b]) continue;
    BwtResult& r = out[member[b]].emplace();
    r.last.assign(g.h_last + g.h_start[b], g.h_last + g.h_start[b + 1]);
    r.orig_ptr = g.h_orig_ptr[b];
  }
  g.stats.total_seconds = seconds();
}

}  // namespace gpbzip2
