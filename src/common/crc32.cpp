#include "crc32.h"

namespace gpbzip2 {

static Crc32Tables make_tables() {
  Crc32Tables tb{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i << 24;
    for (int k = 0; k < 8; k++) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
    tb.t[0][i] = c;
  }
  // t[k][i]: CRC of byte i followed by k zero bytes, for slicing by 16.
  for (int k = 1; k < 16; k++)
    for (uint32_t i = 0; i < 256; i++)
      tb.t[k][i] = (tb.t[k - 1][i] << 8) ^ tb.t[0][tb.t[k - 1][i] >> 24];
  return tb;
}

const Crc32Tables kCrc32 = make_tables();

uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kCrc32.t;
  while (n >= 16) {
    uint32_t hi = crc ^ (uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]);
    crc = t[15][hi >> 24] ^ t[14][(hi >> 16) & 0xff] ^ t[13][(hi >> 8) & 0xff] ^
          t[12][hi & 0xff] ^ t[11][p[4]] ^ t[10][p[5]] ^ t[9][p[6]] ^ t[8][p[7]] ^ t[7][p[8]] ^
          t[6][p[9]] ^ t[5][p[10]] ^ t[4][p[11]] ^ t[3][p[12]] ^ t[2][p[13]] ^ t[1][p[14]] ^
          t[0][p[15]];
    p += 16;
    n -= 16;
  }
  while (n--) crc = crc32_byte(crc, *p++);
  return crc;
}

}  // namespace gpbzip2
