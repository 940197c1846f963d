// An allocator for the sort's large scratch arrays: from 1 MiB up they are 2 MiB aligned
// and marked for transparent huge pages, so a fresh buffer is a few page faults instead of
// one per 4 KiB (a one-block run touches some 8 MB of new scratch memory, and the 4 KiB
// faults cost about 0.6 ms per MB on the 2-core AMD). Where the kernel gives no huge pages
// the marking does nothing.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace gpbzip2 {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    void* p;
    if (bytes >= kHuge / 2) {
      const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      p = std::aligned_alloc(kHuge, rounded);
#ifdef MADV_HUGEPAGE
      if (p) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    } else {
      p = std::malloc(bytes);
    }
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
