// Large arrays on transparent huge pages: 2 MiB aligned and marked, so that a fresh one is
// a few page faults instead of one per 4 KiB (a one-block run touches some 8 MB of new
// sort scratch, and the 4 KiB faults cost about 0.6 ms per MB on the 2-core AMD), and
// random reads over it (the decoder's inverse BWT) miss the TLB less. Where the kernel
// gives no huge pages the marking does nothing.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace gpbzip2 {

inline constexpr size_t kHugePage = size_t(2) << 20;

// At least `bytes`, in whole huge pages, 2 MiB aligned and marked for them (only a hint,
// fine to fail); free with std::free.
inline void* allocate_huge_pages(size_t bytes) {
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

template <class T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  // From half a huge page up; smaller arrays would waste most of one.
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kHugePage / 2) return static_cast<T*>(allocate_huge_pages(bytes));
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) noexcept { std::free(p); }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

template <class T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace gpbzip2
