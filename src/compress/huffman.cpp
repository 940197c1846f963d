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
  constexpr int kBig = kNodes;  // a node heavier than any, parked just past the heap's end
  int32_t heap[format::kMaxAlphaSize + 2];
  int32_t weight[kNodes + 1];
  int32_t parent[kNodes];
  weight[kBig] = INT32_MAX;

  for (int i = 0; i < alpha; i++) weight[i + 1] = (freq[i] == 0 ? 1 : freq[i]) << 8;

  for (;;) {
    // A 1-based binary min-heap of node numbers; heap[0] is a sentinel of weight 0.
    int nodes = alpha, size = 0;
    heap[0] = 0;
    weight[0] = 0;
    parent[0] = -2;
    auto sift_up = [&](int at) {
      int32_t node = heap[at];
      while (weight[node] < weight[heap[at >> 1]]) {
        heap[at] = heap[at >> 1];
        at >>= 1;
      }
      heap[at] = node;
    };
    // The lighter child is picked without a branch: heap[size + 1] is kBig, so a lone
    // child needs no test.
    auto sift_down = [&](int at) {
      int32_t node = heap[at];
      heap[size + 1] = kBig;
      for (;;) {
        int child = at << 1;
        if (child > size) break;
        child += weight[heap[child + 1]] < weight[heap[child]];
        if (weight[node] < weight[heap[child]]) break;
        heap[at] = heap[child];
        at = child;
      }
      heap[at] = node;
    };
    auto pop = [&]() {
      int32_t top = heap[1];
      heap[1] = heap[size--];
      sift_down(1);
      return top;
    };

    for (int i = 1; i <= alpha; i++) {
      parent[i] = -1;
      heap[++size] = i;
      sift_up(size);
    }
    while (size > 1) {
      int32_t a = pop();
      int32_t b = pop();
      nodes++;
      parent[a] = parent[b] = nodes;
      weight[nodes] = merged_weight(weight[a], weight[b]);
      parent[nodes] = -1;
      heap[++size] = nodes;
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
    for (int i = 1; i <= alpha; i++) weight[i] = (1 + (weight[i] >> 8) / 2) << 8;
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
