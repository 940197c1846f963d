// Decoding of one .bz2 block: header, Huffman tables, selectors, MTF and RUNA/RUNB into
// the BWT vector, and the inverse BWT. The inverse of the initial run-length coding is
// RunExpander, which produces the output in pieces so that blocks that expand a lot need
// no large buffer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/format.h"

namespace gpbzip2 {

class BlockDecoder {
 public:
  enum class Status { Ok, Corrupt, OutOfInput };
  static constexpr size_t kTtWords = size_t(format::kMaxBlockBytes);
  // The inverse BWT follows one link per byte, each a cache miss. It cuts the cycle of
  // links into about kChains chains, starting at rows chosen in advance, and walks kLanes
  // of them at once so that their misses overlap; each chain stops where another starts.
  // The lanes write into the caller's work pages, kChunk bytes at a time.
  static constexpr uint32_t kChains = 1024;
  // Chains at least this long, so that a small block takes few lanes, and their chunks few
  // pages (a 1 kB block's 1000 chains of one byte touched eight).
  static constexpr uint32_t kMinChain = 512;
  static constexpr int kLanes = 8;
  static constexpr uint32_t kChunk = 8192;
  static constexpr size_t kWorkPage = size_t(64) << 10;  // a multiple of kChunk
  // Chunks the lanes take at most: full ones hold the block, and kLanes are not full.
  static constexpr size_t kWorkChunks = kTtWords / kChunk + kLanes;
  static constexpr size_t kWorkPages = (kWorkChunks * kChunk + kWorkPage - 1) / kWorkPage;
  // The pages a block of n bytes needs (a small file's block one, not kWorkPages).
  static constexpr size_t work_pages(uint32_t n) {
    return ((n / kChunk + kLanes) * size_t(kChunk) + kWorkPage - 1) / kWorkPage;
  }

  BlockDecoder();
  BlockDecoder(const BlockDecoder&) = delete;
  BlockDecoder& operator=(const BlockDecoder&) = delete;

  // Decodes the block whose 48-bit magic starts at bit `bit` of data[0, size); 8 zero
  // bytes must be readable past size. OutOfInput: the block needs bits past size.
  // Accepts blocks of up to 900000 bytes; the caller checks the stream's level.
  // work: work_pages(block_bytes()) pages of kWorkPage bytes of scratch memory (the pages
  // that take the output afterwards, say), or kWorkPages for any block.
  Status decode(const uint8_t* data, size_t size, uint64_t bit, std::span<uint8_t* const> work);
  // decode() in two steps: the symbols into the BWT vector, then its inverse. With
  // `bwt` (kMaxBlockBytes bytes), the vector goes there for another station to invert,
  // and invert() must not follow.
  Status decode_symbols(const uint8_t* data, size_t size, uint64_t bit, uint8_t* bwt = nullptr);
  void invert(std::span<uint8_t* const> work);
  // Takes a BWT vector as decode_symbols would leave it, for invert().
  void load_bwt(const uint8_t* bwt, uint32_t n, uint32_t orig_ptr, bool randomised);
  // The inverse BWT alone, for tests: the text of the BWT vector bwt[0, n) (n from 1 to
  // kTtWords) and origPtr; for a vector that is no BWT, what bzip2 gives.
  static std::vector<uint8_t> invert_bwt(const uint8_t* bwt, uint32_t n, uint32_t orig_ptr);
  // Why the last decode() said Corrupt.
  const char* why() const { return why_; }
  uint64_t end_bit() const { return end_bit_; }  // first bit after the block
  uint32_t stored_crc() const { return stored_crc_; }
  uint32_t block_bytes() const { return nblock_; }  // BWT length, what the level bounds
  uint32_t orig_ptr() const { return orig_ptr_; }
  bool randomised() const { return randomised_; }
  // The block before the initial run-length coding is undone: the inverse BWT. It lives
  // where the links were, until the next decode().
  std::span<const uint8_t> text() const {
    return {reinterpret_cast<const uint8_t*>(tt_.get()), nblock_};
  }

 private:
  Status fail(const char* why) {
    why_ = why;
    return Status::Corrupt;
  }
  // decode_into in the copy this CPU runs best.
  template <typename Sym>
  Status decode_for_cpu(const uint8_t* data, size_t size, uint64_t bit, Sym* out);
  // kWide: the MTF list in 64-byte vector registers (AVX-512 VBMI).
  template <bool kWide = false, typename Sym>
  [[gnu::always_inline]] Status decode_into(const uint8_t* data, size_t size, uint64_t bit,
                                            Sym* out);
#ifdef __x86_64__
  // decode_into for CPUs with AVX-512 BW, VL and VBMI, with AVX2 and BMI2, and for those with
  // SSSE3, chosen at run time.
  template <typename Sym>
  [[gnu::target("avx512bw,avx512vl,avx512vbmi,avx2,bmi2")]] Status decode_into_avx512(
      const uint8_t* data, size_t size, uint64_t bit, Sym* out);
  template <typename Sym>
  [[gnu::target("avx2,bmi2")]] Status decode_into_avx2(const uint8_t* data, size_t size,
                                                       uint64_t bit, Sym* out);
  template <typename Sym>
  [[gnu::target("ssse3")]] Status decode_into_ssse3(const uint8_t* data, size_t size,
                                                    uint64_t bit, Sym* out);
#endif
  void link_rows();
  void undo_bwt(std::span<uint8_t* const> work);
  uint32_t walk_chains(std::span<uint8_t* const> work);

  struct Free {
    void operator()(uint32_t* p) const;
  };
  // A stretch of text one chain wrote into the work pages, and the chain's next stretch.
  struct Piece {
    const uint8_t *begin, *end;
    uint32_t next;
  };
  // Chain c starts at row c * chain_step_, or at the row of the text's first byte.
  struct Chain {
    uint32_t first_piece, last_piece;
    uint32_t end_row;  // where the next chain in text order starts
  };

  // tt_[0, kTtWords): the BWT vector, then the links of the inverse BWT (next row << 8 |
  // byte, and kChainEnd where the next row starts a chain), then the text. On huge pages
  // where the system allows (the inverse BWT visits it in random order), but for its
  // first 16k words, all that blocks of a small file touch.
  static constexpr size_t kTtHeadBytes = size_t(64) << 10;
  std::unique_ptr<uint32_t[], Free> tt_;
  std::vector<Piece> pieces_;
  std::vector<Chain> chains_;
  uint32_t chain_step_ = 1;  // a power of two
  uint32_t freq_[256];  // occurrences of each byte in the BWT vector (in tt_ only)
  uint32_t nblock_ = 0;
  uint32_t orig_ptr_ = 0;
  bool randomised_ = false;
  uint32_t stored_crc_ = 0;
  uint64_t end_bit_ = 0;
  const char* why_ = "";
};

// Undoes the initial run-length coding of a block's text (4 equal bytes, then a count of
// further copies), piece by piece, and computes the block CRC on the way.
class RunExpander {
 public:
  RunExpander(const uint8_t* text, size_t size) : p_(text), end_(text + size) {}
  // Up to cap bytes of output; 0 at the end.
  size_t read(uint8_t* buf, size_t cap);
  uint32_t crc() const { return ~crc_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  uint32_t run_ = 0;
  uint8_t last_ = 0;
  uint32_t repeat_ = 0;  // copies of last_ still to write
  uint32_t crc_ = ~0u;
};

}  // namespace gpbzip2
