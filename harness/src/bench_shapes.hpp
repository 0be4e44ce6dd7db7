// The problem shapes `glabench bench` runs: the named sets and --shape B,T,H,K,V (and
// the sizes of `glabench decode-drift --shape B,H,K,V`, read by the same rules).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glabench {

struct bench_shape {
  int64_t B, T, H, K, V;
  // A packed batch (B = 1): the lengths of its sequences, which sum to T; empty for B
  // sequences of T tokens.
  std::vector<int64_t> seqlens = {};
};

// "seed", "fla", "t-sweep", "decode" (T = 1, B 1, 64 and 256, H16 D128) or "packed" (B1
// T16384 H16 D128 in 16 sequences of mixed lengths, 7 to 3000); throws
// std::invalid_argument naming the sets otherwise.
std::vector<bench_shape> shape_set(const std::string& name);
// "B,T,H,K,V" of positive integers whose product is at most kMaxShapeProduct, or a packed
// batch "1,T,H,K,V:L1+L2+…" whose sequence lengths sum to T; throws std::invalid_argument
// otherwise.
bench_shape parse_shape(const std::string& text);
// The sizes named by `layout` ("B,T,H,K,V", "B,H,K,V"), from `text`: as many positive
// integers, comma-separated; throws std::invalid_argument naming `option`, the text and
// the rule otherwise.
std::vector<int64_t> parse_sizes(const std::string& text, const std::string& option,
                                 const std::string& layout);

// Throws std::invalid_argument (check_cu_seqlens' message) unless s is equal-length or a
// packed batch: B = 1, lengths ≥ 1 summing to T.
void check_packed_shape(const bench_shape& s);

// The largest B·T·H·K·V: no size or count computed from a shape (a product of some of its
// parts) can then overflow a 64-bit integer. The largest "fla" shape is about 2^45.
inline constexpr int64_t kMaxShapeProduct = int64_t(1) << 62;
// Whether every part is ≥ 1 and their product at most kMaxShapeProduct.
bool shape_in_range(const bench_shape& s);

}  // namespace glabench
