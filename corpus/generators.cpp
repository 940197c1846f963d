#include "generators.h"

#include <bit>
#include <memory>
#include <stdexcept>
#include <utility>

namespace gpbzip2::corpus {
namespace {

// splitmix64: small, fast and the same on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return uint32_t(next() % n); }
};

// A producer writes whole units (a word, a record, a run) into a carry-over buffer.
ByteStream from_units(std::function<void(Rng&, std::string&)> unit, uint64_t seed) {
  auto rng = std::make_shared<Rng>(Rng{seed});
  auto pending = std::make_shared<std::string>();
  auto pos = std::make_shared<size_t>(0);
  return [=](uint8_t* buf, size_t n) {
    while (n > 0) {
      if (*pos == pending->size()) {
        pending->clear();
        *pos = 0;
        unit(*rng, *pending);
      }
      size_t k = std::min(n, pending->size() - *pos);
      std::copy_n(pending->data() + *pos, k, buf);
      *pos += k;
      buf += k;
      n -= k;
    }
  };
}

const char* const kWords[] = {
    "the", "of", "and", "to", "a", "in", "that", "is", "was", "he", "for", "it", "with", "as",
    "his", "on", "be", "at", "by", "had", "not", "are", "but", "from", "or", "have", "an",
    "they", "which", "one", "you", "were", "her", "all", "she", "there", "would", "their",
    "we", "him", "been", "has", "when", "who", "will", "more", "no", "if", "out", "so",
    "said", "what", "up", "its", "about", "into", "than", "them", "can", "only", "other",
    "new", "some", "could", "time", "these", "two", "may", "then", "do", "first", "any",
    "my", "now", "such", "like", "our", "over", "man", "me", "even", "most", "made",
    "after", "also", "did", "many", "before", "must", "through", "back", "years", "where",
    "much", "your", "way", "well", "down", "should", "because", "each", "just", "those",
    "people", "how", "too", "little", "state", "good", "very", "make", "world", "still",
    "compression", "block", "sorting", "Burrows", "Wheeler", "transform", "Huffman"};
constexpr uint32_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);

// Letters per unit of the letter-by-letter kinds, so the stream is filled in bulk.
constexpr size_t kLetterUnit = 4096;

// The Fibonacci word as a depth-first walk of a->ab, b->a applied `depth` times to "a":
// the stack holds the letters still to expand, with their remaining depth.
struct FibonacciWalk {
  // a expanded 92 times is F(94) > 2^64 letters long, more than any stream is asked for.
  std::vector<std::pair<char, int>> stack{{'a', 92}};
  char next() {
    auto [c, d] = stack.back();
    stack.pop_back();
    // a -> ab: the a is expanded first, the b later; b -> a.
    for (; d > 0; d--) {
      if (c == 'a') stack.push_back({'b', d - 1});
      c = 'a';
    }
    return c;
  }
};

size_t chunk_length(const std::string& pattern) {
  if (pattern.empty()) return 100000;
  size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(pattern, &used);
  } catch (const std::exception&) {
  }
  // Up to 1 GiB: the chunk is held in memory.
  if (used != pattern.size() || n == 0 || n > (1ull << 30))
    throw std::invalid_argument("repeat: chunk length must be a number from 1 to 2^30: " + pattern);
  return size_t(n);
}

}  // namespace

const std::vector<std::string>& kinds() {
  static const std::vector<std::string> k = {
      "text",      "binary",     "runs",   "periodic", "random", "zeros", "sparse",
      "fibonacci", "thue-morse", "repeat", "edits"};
  return k;
}

ByteStream open_stream(const std::string& kind, uint64_t seed, const std::string& pattern) {
  if (kind == "text")
    return from_units(
        [](Rng& r, std::string& out) {
          // Zipf-like: the product of two uniform picks favours the first words.
          uint32_t w = r.below(kWordCount) * r.below(kWordCount) / kWordCount;
          out += kWords[w];
          uint32_t p = r.below(100);
          out += p < 8 ? ", " : p < 12 ? ".\n" : p < 13 ? ".\n\n" : " ";
        },
        seed);
  if (kind == "binary")
    return from_units(
        [](Rng& r, std::string& out) {
          uint32_t tag = r.below(16);
          out += "REC";
          out += char(tag);
          for (int i = 0; i < 12; i++) out += char(i < 4 ? r.below(4) : r.below(256) >> (tag & 7));
        },
        seed);
  if (kind == "runs")
    return from_units(
        [](Rng& r, std::string& out) { out.append(1 + r.below(600), char(r.below(4))); }, seed);
  if (kind == "periodic") {
    std::string p = pattern.empty() ? "ab" : pattern;
    return from_units([p](Rng&, std::string& out) { out = p; }, seed);
  }
  if (kind == "random")
    return from_units(
        [](Rng& r, std::string& out) {
          uint64_t v = r.next();
          out.assign(reinterpret_cast<const char*>(&v), 8);
        },
        seed);
  if (kind == "zeros") return [](uint8_t* buf, size_t n) { std::fill_n(buf, n, 0); };
  if (kind == "sparse")
    return from_units(
        [](Rng& r, std::string& out) {
          out.assign(r.below(3000), '\0');
          out += char(r.below(256));
        },
        seed);
  if (kind == "fibonacci") {
    auto walk = std::make_shared<FibonacciWalk>();
    return from_units(
        [walk](Rng&, std::string& out) {
          for (size_t i = 0; i < kLetterUnit; i++) out += walk->next();
        },
        seed);
  }
  if (kind == "thue-morse") {
    auto n = std::make_shared<uint64_t>(0);
    return from_units(
        [n](Rng&, std::string& out) {
          for (size_t i = 0; i < kLetterUnit; i++) out += std::popcount((*n)++) & 1 ? 'b' : 'a';
        },
        seed);
  }
  if (kind == "repeat") {
    std::string chunk(chunk_length(pattern), '\0');
    Rng r{seed};
    for (auto& c : chunk) c = char(r.below(256));
    return from_units([chunk](Rng&, std::string& out) { out = chunk; }, seed);
  }
  if (kind == "edits") {
    std::string paragraph(3000, '\0');
    open_stream("text", seed)(reinterpret_cast<uint8_t*>(paragraph.data()), paragraph.size());
    // Its own random sequence: the paragraph's generator started from the same seed.
    return from_units(
        [paragraph](Rng& r, std::string& out) {
          out = paragraph;
          char& c = out[r.below(uint32_t(out.size()))];
          char e = char('a' + r.below(25));
          c = e >= c ? char(e + 1) : e;  // never c itself
        },
        ~seed);
  }
  throw std::invalid_argument("unknown corpus kind: " + kind);
}

std::vector<uint8_t> generate(const std::string& kind, size_t size, uint64_t seed,
                              const std::string& pattern) {
  std::vector<uint8_t> v(size);
  if (size) open_stream(kind, seed, pattern)(v.data(), size);
  return v;
}

}  // namespace gpbzip2::corpus
