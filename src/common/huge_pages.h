// Large arrays on transparent huge pages: 2 MiB aligned and marked, so that a fresh one is
// a few page faults instead of one per 4 KiB (a one-block run touches some 8 MB of new
// sort scratch, and the 4 KiB faults cost about 0.6 ms per MB on the 2-core AMD), and
// random reads over it (the decoder's inverse BWT) miss the TLB less. Where the kernel
// gives no huge pages the marking does nothing.
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace gpbzip2 {

inline constexpr size_t kHugePage = size_t(2) << 20;

inline size_t whole_huge_pages(size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

inline constexpr size_t kSmallPage = 4096;

inline size_t whole_small_pages(size_t bytes) {
  return (bytes + kSmallPage - 1) / kSmallPage * kSmallPage;
}

// `bytes` (in whole small pages) from a 2 MiB aligned start, marked for huge pages (only a
// hint, fine to fail): each whole 2 MiB of it can be a huge page, what is past the last
// one stays on small pages. Free with unmap_huge_pages and the same `bytes`. Mapped on its
// own, so that freeing gives the memory back to the system: malloc would keep freed chunks
// this large in its arenas and raise its threshold for mapping them (with resize_scratch,
// silesia-7x4 at -n16 went from 247 to 189 MB peak on the 2-core AMD).
inline void* map_huge_pages(size_t bytes) {
  const size_t rounded = whole_small_pages(std::max<size_t>(bytes, 1));
  // One huge page more than needed, then the ends cut off where the alignment falls.
  void* const m = mmap(nullptr, rounded + kHugePage, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(m);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) munmap(m, aligned - start);
  munmap(reinterpret_cast<void*>(aligned + rounded), start + kHugePage - aligned);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void*>(aligned), rounded, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(aligned);
}

inline void unmap_huge_pages(void* p, size_t bytes) {
  if (p) munmap(p, whole_small_pages(std::max<size_t>(bytes, 1)));
}

// At least `bytes`, all of it on huge pages; free with free_huge_pages and the same `bytes`.
inline void* allocate_huge_pages(size_t bytes) { return map_huge_pages(whole_huge_pages(bytes)); }
inline void free_huge_pages(void* p, size_t bytes) { unmap_huge_pages(p, whole_huge_pages(bytes)); }

// `head` bytes on small pages (at most a huge page), then `bytes` more on huge pages from
// a 2 MiB boundary: an array that a short use touches only at its start (a small file's
// one block) then faults in a few small pages, not a whole huge page to clear (0.15 ms
// of decompressing a 1 kB file on a 2-core Xeon VM). Free with free_after_small_head and the
// same sizes.
inline void* allocate_after_small_head(size_t head, size_t bytes) {
  auto* const base = static_cast<uint8_t*>(map_huge_pages(kHugePage + whole_huge_pages(bytes)));
#ifdef MADV_NOHUGEPAGE
  madvise(base, kHugePage, MADV_NOHUGEPAGE);
#endif
  return base + kHugePage - whole_small_pages(head);
}
inline void free_after_small_head(void* p, size_t head, size_t bytes) {
  if (p)
    unmap_huge_pages(static_cast<uint8_t*>(p) + whole_small_pages(head) - kHugePage,
                     kHugePage + whole_huge_pages(bytes));
}

template <class T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  // From half a huge page up; smaller arrays would waste most of one.
  static bool huge(size_t n) { return n * sizeof(T) >= kHugePage / 2; }
  // The mapping is the capacity asked for: resize_scratch decides how much of it is on
  // huge pages.
  T* allocate(size_t n) {
    if (huge(n)) return static_cast<T*>(map_huge_pages(n * sizeof(T)));
    void* p = std::malloc(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (huge(n))
      unmap_huge_pages(p, n * sizeof(T));
    else
      std::free(p);
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

template <class T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

// Makes a block's scratch array hold at least n elements, its contents not kept where it
// must grow; it never shrinks, so a size asked for again is not zeroed again (the sort
// asks for its arrays and the text, its caller for the arrays alone). From a quarter of
// a huge page up it takes whole huge pages at once: the sort reads a block's text at
// random, and silesia-7 at -n1 took about 7% longer with the text on small pages (2-core
// AMD), and blocks of slightly different sizes then reuse one allocation, where the
// vector's own growth would double it. Only a tail of at most a
// quarter huge page past the last whole one stays on small pages: the sort's arrays with
// the block's text after them take 4.3 MiB at -9 instead of 6, and sorted as fast on the
// 2-core AMD and the H100 host's Xeon (kernels/NOTES.md).
template <class T>
void resize_scratch(HugePageVector<T>& v, size_t n) {
  if (n > v.capacity()) {
    HugePageVector<T>().swap(v);
    const size_t bytes = n * sizeof(T);
    const bool small_tail = bytes > kHugePage && bytes % kHugePage <= kHugePage / 4;
    if (bytes < kHugePage / 4)
      v.reserve(n);
    else
      v.reserve((small_tail ? whole_small_pages(bytes) : whole_huge_pages(bytes)) / sizeof(T));
  }
  if (n > v.size()) v.resize(n);
}

}  // namespace gpbzip2
