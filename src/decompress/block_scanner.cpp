#include "block_scanner.h"

#include <algorithm>
#include <array>

#include "common/bit_reader.h"
#include "common/format.h"

namespace gpbzip2 {

namespace {

// A magic starting at bit s of byte i covers all of bytes i + 1 and i + 2, which must
// then equal bits 8 - s .. 23 - s of the magic. kShifts[k][v]: bit s set when byte
// value v fits byte i + 1 + k of a block magic at shift s, bit 8 + s when it fits an
// end-of-stream magic. Both bytes pass for about one position in 4000, so the scan is
// two table lookups a byte.
constexpr std::array<uint16_t, 256> make_shifts(int k) {
  std::array<uint16_t, 256> t{};
  for (int s = 0; s < 8; s++) {
    t[(format::kBlockMagic >> (32 - 8 * k + s)) & 0xff] |= uint16_t(1u << s);
    t[(format::kEndMagic >> (32 - 8 * k + s)) & 0xff] |= uint16_t(1u << (8 + s));
  }
  return t;
}
constexpr std::array<uint16_t, 256> kShifts1 = make_shifts(0), kShifts2 = make_shifts(1);

}  // namespace

void scan_for_magic(const uint8_t* data, size_t size, size_t from, size_t to,
                    std::vector<MagicHit>& hits) {
  to = std::min(to, size >= 6 ? size - 5 : 0);
  for (size_t i = from; i < to; i++) {
    const uint16_t shifts = kShifts1[data[i + 1]] & kShifts2[data[i + 2]];
    if (!shifts) continue;
    uint8_t window[8] = {};
    std::copy(data + i, data + std::min(i + 8, size), window);
    const uint64_t v = load_be64(window);
    for (int s = 0; s < 8; s++) {
      if (!(shifts & (0x101u << s))) continue;
      const uint64_t bits = (v << s) >> 16;
      const bool fits = uint64_t(i) * 8 + uint64_t(s) + 48 <= uint64_t(size) * 8;
      if (fits && (bits == format::kBlockMagic || bits == format::kEndMagic))
        hits.push_back({uint64_t(i) * 8 + uint64_t(s), bits == format::kEndMagic});
    }
  }
}

}  // namespace gpbzip2
