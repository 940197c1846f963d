// Inverse BWT of a batch of blocks: the links with one CUB radix sort, then the text by
// walking chains, as the CPU decoder does but with tens of thousands of chains at once.
//
// All blocks of a batch lie back to back (block b holds global positions start[b] ..
// start[b+1]). Row j's next row in text order is the j-th position of the block in a
// stable sort of its BWT vector by byte; one sort of (block, byte) keys over the whole
// batch gives every block's. Each link packs the next row (local to the block), a flag
// saying that row starts a chain, and row j's byte.
//
// Chains start at every kStep-th row of a block and at its first row (the row after
// origPtr). A walk from a chain's start emits one byte per row until it reaches the next
// start: one pass measures each chain and names its successor, one thread per block
// then follows the successors from the first row's chain to give each chain its place in
// the text, and a second pass writes the bytes there. Chains off the first row's cycle
// (a vector that is no BWT) get no place; the cycle's text is then repeated to fill the
// block, as bzip2 and the CPU decoder give it.
#include <cub/device/device_radix_sort.cuh>

#include <cstring>

#include "batch.cuh"
#include "cuda_check.h"
#include "decompress/gpu_inverse_bwt.h"

namespace gpbzip2 {
namespace {

// Rows between chain starts: about n / kStep chains a block, enough to keep the GPU's
// memory busy with a few blocks in a batch, and few enough that ranking them one block
// per thread stays short.
constexpr uint32_t kStep = 256;
constexpr int kBlockBits = 20;           // blocks are under 2^20 bytes
constexpr uint32_t kStartFlag = 1u << 8;  // in a link: the next row starts a chain
constexpr uint32_t kNoPlace = ~0u;

__device__ uint32_t chains_stepped(uint32_t n) { return (n + kStep - 1) / kStep; }

// The chain starting at `row` of block b, whose chains are numbered from `base`: a
// stepped one, or the first row's own chain after them.
__device__ uint32_t chain_at(uint32_t base, uint32_t n, uint32_t row) {
  return row % kStep == 0 ? base + row / kStep : base + chains_stepped(n);
}

__global__ void sort_input(const uint8_t* vec, const uint32_t* start, uint32_t nblocks,
                           uint32_t total, uint32_t* keys, uint32_t* values) {
  const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= total) return;
  keys[i] = block_of(start, nblocks, i) << 8 | vec[i];
  values[i] = i;
}

// The first row of the text: the row after origPtr's.
__global__ void find_first_rows(const uint32_t* sorted, const uint32_t* start,
                                const uint32_t* orig_ptr, uint32_t nblocks, uint32_t* first) {
  const uint32_t b = blockIdx.x * kThreads + threadIdx.x;
  if (b >= nblocks) return;
  first[b] = sorted[start[b] + orig_ptr[b]] - start[b];
}

__global__ void make_links(const uint8_t* vec, const uint32_t* sorted, const uint32_t* start,
                           const uint32_t* first, uint32_t nblocks, uint32_t total,
                           uint32_t* links) {
  const uint32_t j = blockIdx.x * kThreads + threadIdx.x;
  if (j >= total) return;
  const uint32_t b = block_of(start, nblocks, j);
  const uint32_t next = sorted[j] - start[b];
  const bool starts = next % kStep == 0 || next == first[b];
  links[j] = next << 9 | (starts ? kStartFlag : 0) | vec[j];
}

struct Chains {
  const uint32_t* links;
  const uint32_t* start;
  const uint32_t* first;
  const uint32_t* base;  // block b's chains are base[b] .. base[b+1]
  uint32_t nblocks, count;
  uint32_t *length, *next, *place;
};

// Pass 1 (text == null): each chain's length and successor. Pass 2: its bytes, at its
// place in the text.
__global__ void walk_chains(Chains c, uint8_t* text) {
  const uint32_t k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= c.count) return;
  const uint32_t b = block_of(c.base, c.nblocks, k);
  const uint32_t s = c.start[b], n = c.start[b + 1] - s, local = k - c.base[b];
  uint32_t row = local < chains_stepped(n) ? local * kStep : c.first[b];
  // The first row's own chain is empty when the first row is a stepped start.
  if (local == chains_stepped(n) && row % kStep == 0) {
    if (!text) c.length[k] = 0;
    return;
  }
  uint8_t* out = nullptr;
  if (text) {
    if (c.place[k] == kNoPlace) return;
    out = text + s + c.place[k];
  }
  const uint32_t* const links = c.links + s;
  uint32_t len = 0, link;
  do {
    link = links[row];
    if (out) out[len] = uint8_t(link);
    len++;
    row = link >> 9;
  } while (!(link & kStartFlag));
  if (!text) {
    c.length[k] = len;
    c.next[k] = chain_at(c.base[b], n, row);
  }
}

// One thread per block: the chains of the first row's cycle in text order.
__global__ void place_chains(Chains c, uint32_t* cycle) {
  const uint32_t b = blockIdx.x * kThreads + threadIdx.x;
  if (b >= c.nblocks) return;
  const uint32_t n = c.start[b + 1] - c.start[b];
  const uint32_t first = chain_at(c.base[b], n, c.first[b]);
  uint32_t k = first, at = 0;
  do {
    c.place[k] = at;
    at += c.length[k];
    k = c.next[k];
  } while (k != first);
  cycle[b] = at;
}

// Fills each block past its cycle with the cycle repeated.
__global__ void repeat_cycles(uint8_t* text, const uint32_t* start, const uint32_t* cycle,
                              uint32_t nblocks, uint32_t total) {
  const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= total) return;
  const uint32_t b = block_of(start, nblocks, i);
  const uint32_t local = i - start[b], len = cycle[b];
  if (local >= len) text[i] = text[start[b] + local % len];
}

}  // namespace

struct GpuInverseBwt::Impl {
  explicit Impl(int d) : device(d), mem(d) {}
  ~Impl() {
    // Errors here only mean the device is already gone; mem frees the buffers after.
    cudaSetDevice(device);
    if (stream) cudaStreamSynchronize(stream);
    if (stream) cudaStreamDestroy(stream);
  }

  int device;
  size_t max_bytes = 0;
  uint32_t max_blocks = 0, max_chains = 0;
  GpuMemory mem;
  cudaStream_t stream = nullptr;
  uint8_t* vec;  // the BWT vectors, then the texts
  uint32_t *keys[2], *values[2];
  uint32_t *start, *orig_ptr, *first, *base, *cycle;
  uint32_t *length, *next, *place;
  void* temp;
  size_t temp_bytes = 0;
  uint8_t* h_vec;
  uint32_t *h_start, *h_orig_ptr, *h_base;

  size_t radix_sort(cub::DoubleBuffer<uint32_t>& k, cub::DoubleBuffer<uint32_t>& v, uint32_t m,
                    int end_bit, void* scratch) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch, bytes, k, v, m, 0, end_bit, stream));
    return bytes;
  }
};

GpuInverseBwt::GpuInverseBwt(int device, size_t max_bytes, uint32_t max_blocks)
    : impl_(new Impl(device)) {
  Impl& g = *impl_;
  // Keys hold the block above the byte; links a row of a block above it and a flag.
  if (max_bytes >= (size_t(1) << 31) || max_blocks > (1u << 23)) throw GpuError("batch too large");
  g.max_bytes = max_bytes;
  g.max_blocks = max_blocks;
  // Every block has n / kStep chains rounded up, and the first row's.
  g.max_chains = uint32_t(max_bytes / kStep) + 2 * max_blocks;
  CUDA_CHECK(cudaSetDevice(device));
  // Lanes wait on their streams; spinning there would take cores from the CPU stations.
  // Refused once the device is in use, which leaves whatever the first lane set.
  if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) cudaGetLastError();
  CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  const size_t n = max_bytes;
  g.vec = g.mem.device<uint8_t>(n);
  for (int b = 0; b < 2; b++) {
    g.keys[b] = g.mem.device<uint32_t>(n);
    g.values[b] = g.mem.device<uint32_t>(n);
  }
  g.start = g.mem.device<uint32_t>(max_blocks + 1);
  g.orig_ptr = g.mem.device<uint32_t>(max_blocks);
  g.first = g.mem.device<uint32_t>(max_blocks);
  g.base = g.mem.device<uint32_t>(max_blocks + 1);
  g.cycle = g.mem.device<uint32_t>(max_blocks);
  g.length = g.mem.device<uint32_t>(g.max_chains);
  g.next = g.mem.device<uint32_t>(g.max_chains);
  g.place = g.mem.device<uint32_t>(g.max_chains);
  g.h_vec = g.mem.host<uint8_t>(n);
  g.h_start = g.mem.host<uint32_t>(max_blocks + 1);
  g.h_orig_ptr = g.mem.host<uint32_t>(max_blocks);
  g.h_base = g.mem.host<uint32_t>(max_blocks + 1);
  cub::DoubleBuffer<uint32_t> k(g.keys[0], g.keys[1]), v(g.values[0], g.values[1]);
  g.temp_bytes = g.radix_sort(k, v, uint32_t(n), 32, nullptr);
  g.temp = g.mem.device<uint8_t>(g.temp_bytes);
}

GpuInverseBwt::~GpuInverseBwt() = default;

size_t GpuInverseBwt::max_bytes() const { return impl_->max_bytes; }
uint32_t GpuInverseBwt::max_blocks() const { return impl_->max_blocks; }

void GpuInverseBwt::invert(const std::vector<InverseBwtBlock>& blocks) {
  Impl& g = *impl_;
  if (blocks.empty()) return;
  if (blocks.size() > g.max_blocks) throw GpuError("batch larger than reserved");
  const uint32_t nb = uint32_t(blocks.size());
  uint32_t total = 0, chains = 0;
  for (uint32_t b = 0; b < nb; b++) {
    const InverseBwtBlock& blk = blocks[b];
    if (blk.size == 0 || blk.size > (1u << kBlockBits) || blk.orig_ptr >= blk.size)
      throw GpuError("block the GPU cannot invert");
    if (total + size_t(blk.size) > g.max_bytes) throw GpuError("batch larger than reserved");
    g.h_start[b] = total;
    g.h_orig_ptr[b] = blk.orig_ptr;
    g.h_base[b] = chains;
    std::memcpy(g.h_vec + total, blk.data, blk.size);
    total += blk.size;
    chains += (blk.size + kStep - 1) / kStep + 1;
  }
  g.h_start[nb] = total;
  g.h_base[nb] = chains;

  CUDA_CHECK(cudaSetDevice(g.device));
  CUDA_CHECK(cudaMemcpyAsync(g.vec, g.h_vec, total, cudaMemcpyHostToDevice, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.start, g.h_start, (nb + 1) * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.orig_ptr, g.h_orig_ptr, nb * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, g.stream));
  CUDA_CHECK(cudaMemcpyAsync(g.base, g.h_base, (nb + 1) * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, g.stream));

  cub::DoubleBuffer<uint32_t> k(g.keys[0], g.keys[1]), v(g.values[0], g.values[1]);
  sort_input<<<grid_for(total), kThreads, 0, g.stream>>>(g.vec, g.start, nb, total, k.Current(),
                                                         v.Current());
  CUDA_CHECK(cudaGetLastError());
  g.radix_sort(k, v, total, 8 + bit_width(nb - 1), g.temp);
  const uint32_t* sorted = v.Current();
  find_first_rows<<<grid_for(nb), kThreads, 0, g.stream>>>(sorted, g.start, g.orig_ptr, nb,
                                                           g.first);
  CUDA_CHECK(cudaGetLastError());
  // The sorted keys are done with: their buffer takes the links.
  uint32_t* links = k.Current();
  make_links<<<grid_for(total), kThreads, 0, g.stream>>>(g.vec, sorted, g.start, g.first, nb,
                                                         total, links);
  CUDA_CHECK(cudaGetLastError());

  const Chains c{links, g.start, g.first, g.base, nb, chains, g.length, g.next, g.place};
  walk_chains<<<grid_for(chains), kThreads, 0, g.stream>>>(c, nullptr);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemsetAsync(g.place, 0xff, chains * sizeof(uint32_t), g.stream));
  place_chains<<<grid_for(nb), kThreads, 0, g.stream>>>(c, g.cycle);
  CUDA_CHECK(cudaGetLastError());
  walk_chains<<<grid_for(chains), kThreads, 0, g.stream>>>(c, g.vec);
  CUDA_CHECK(cudaGetLastError());
  repeat_cycles<<<grid_for(total), kThreads, 0, g.stream>>>(g.vec, g.start, g.cycle, nb, total);
  CUDA_CHECK(cudaGetLastError());

  CUDA_CHECK(cudaMemcpyAsync(g.h_vec, g.vec, total, cudaMemcpyDeviceToHost, g.stream));
  CUDA_CHECK(cudaStreamSynchronize(g.stream));
  for (uint32_t b = 0; b < nb; b++)
    std::memcpy(blocks[b].data, g.h_vec + g.h_start[b], blocks[b].size);
}

}  // namespace gpbzip2
