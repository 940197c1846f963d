// A byte vector whose growth leaves the new bytes unwritten, where std::vector writes
// zeros: for buffers filled at once by a read or a copy (blocks on their way to the
// stations, the decompressor's input), which then pay neither for the zeros nor, where the
// input is small, for faulting in pages they never use; a recycled one is not zeroed again.
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace gpbzip2 {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using ByteVector = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

}  // namespace gpbzip2
