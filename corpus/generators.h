// Generated test data: each kind streams any number of bytes from a seed, so inputs of
// any size (past 4 GiB too) are made on the fly and never stored.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpbzip2::corpus {

// Fills buffers with the next bytes of one generated stream.
using ByteStream = std::function<void(uint8_t* buf, size_t n)>;

// Kinds: "text" (English-like words), "binary" (records of small integers and tags),
// "runs" (runs of every length 1..600), "periodic" (the pattern repeated; default "ab"),
// "random", "zeros", "sparse" (mostly zeros with rare random bytes).
// Hard inputs for rotation sorts (long repeats, high periodicity):
// "fibonacci" (the Fibonacci word abaababaab..., the fixed point of a->ab, b->a),
// "thue-morse" (abbabaab..., letter n is b when n has an odd number of one bits),
// "repeat" (a chunk of random bytes repeated; the pattern is the chunk length in bytes,
// default 100000), "edits" (a 3000-byte text paragraph repeated, each copy with one
// byte changed to another lowercase letter at a random position).
// An empty pattern means the kind's default. Throws std::invalid_argument for an unknown
// kind or a bad pattern.
ByteStream open_stream(const std::string& kind, uint64_t seed = 1, const std::string& pattern = "");

std::vector<uint8_t> generate(const std::string& kind, size_t size, uint64_t seed = 1,
                              const std::string& pattern = "");

const std::vector<std::string>& kinds();

}  // namespace gpbzip2::corpus
