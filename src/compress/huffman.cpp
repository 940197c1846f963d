#include "huffman.h"

#include <algorithm>
#include <cstdint>

#include "common/format.h"

namespace gpbzip2 {

// Node weights keep the subtree depth in the low 8 bits: among equal frequencies the
// shallower subtree is merged first, which is bzip2's tie-break.
static inline int32_t merged_weight(int32_t a, int32_t b) {
  return ((a & ~0xff) + (b & ~0xff)) | (1 + std::max(a & 0xff, b & 0xff));
}

void make_code_lengths(uint8_t* len, const int32_t* freq, int alpha, int max_len) {
  constexpr int kNodes = 2 * format::kMaxAlphaSize;
  // A heap entry is its node's weight above the node number, so that a comparison reads
  // no other array (the chains of dependent loads were most of the time). Only weights
  // are compared, the node bits masked off one side: bzip2's order among equal weights
  // is its heap's, and stays so.
  constexpr int kNodeBits = 10;
  static_assert(kNodes < (1 << kNodeBits));
  constexpr uint64_t kNodeMask = (1u << kNodeBits) - 1;
  constexpr uint64_t kBig = uint64_t(INT32_MAX) << kNodeBits;  // heavier than any node
  auto lighter = [](uint64_t a, uint64_t b) { return a < (b & ~kNodeMask); };
  uint64_t heap[format::kMaxAlphaSize + 2];
  int32_t leaf[format::kMaxAlphaSize + 1];
  int32_t parent[kNodes];

  for (int i = 0; i < alpha; i++) leaf[i + 1] = (freq[i] == 0 ? 1 : freq[i]) << 8;

  for (;;) {
    // A 1-based binary min-heap; heap[0] is a sentinel of weight 0.
    int nodes = alpha, size = 0;
    heap[0] = 0;
    auto sift_up = [&](int at) {
      const uint64_t key = heap[at];
      while (lighter(key, heap[at >> 1])) {
        heap[at] = heap[at >> 1];
        at >>= 1;
      }
      heap[at] = key;
    };
    // The lighter child is picked without a branch: heap[size + 1] is kBig, so a lone
    // child needs no test.
    auto sift_down = [&](int at) {
      const uint64_t key = heap[at];
      heap[size + 1] = kBig;
      for (;;) {
        int child = at << 1;
        if (child > size) break;
        child += lighter(heap[child + 1], heap[child]);
        if (lighter(key, heap[child])) break;
        heap[at] = heap[child];
        at = child;
      }
      heap[at] = key;
    };
    auto pop = [&]() {
      const uint64_t top = heap[1];
      heap[1] = heap[size--];
      sift_down(1);
      return top;
    };

    for (int i = 1; i <= alpha; i++) {
      heap[++size] = uint64_t(leaf[i]) << kNodeBits | uint64_t(i);
      sift_up(size);
    }
    while (size > 1) {
      const uint64_t a = pop();
      const uint64_t b = pop();
      nodes++;
      parent[a & kNodeMask] = parent[b & kNodeMask] = nodes;
      const int32_t w = merged_weight(int32_t(a >> kNodeBits), int32_t(b >> kNodeBits));
      heap[++size] = uint64_t(w) << kNodeBits | uint64_t(nodes);
      sift_up(size);
    }

    // A parent is made after its children, so one pass down the node numbers gives every
    // depth from its parent's.
    int32_t depth[kNodes];
    depth[nodes] = 0;
    for (int k = nodes - 1; k >= 1; k--) depth[k] = depth[parent[k]] + 1;
    bool too_long = false;
    for (int i = 1; i <= alpha; i++) {
      len[i - 1] = uint8_t(depth[i]);
      too_long |= depth[i] > max_len;
    }
    if (!too_long) return;
    for (int i = 1; i <= alpha; i++) leaf[i] = (1 + (leaf[i] >> 8) / 2) << 8;
  }
}

void assign_codes(uint32_t* code, const uint8_t* len, int alpha) {
  int min_len = 32, max_len = 0;
  for (int i = 0; i < alpha; i++) {
    min_len = std::min<int>(min_len, len[i]);
    max_len = std::max<int>(max_len, len[i]);
  }
  uint32_t next = 0;
  for (int l = min_len; l <= max_len; l++) {
    for (int i = 0; i < alpha; i++)
      if (len[i] == l) code[i] = next++;
    next <<= 1;
  }
}

}  // namespace gpbzip2
