#include "bench_shapes.hpp"

#include <algorithm>
#include <stdexcept>

#include "glabench/reference/problem.hpp"

namespace glabench {

std::vector<bench_shape> shape_set(const std::string& name) {
  if (name == "seed") return {{4, 1024, 4, 100, 100}};
  if (name == "fla")
    return {{1, 8192, 96, 128, 128}, {2, 16384, 16, 128, 128}, {4, 2048, 16, 128, 128},
            {4, 4096, 64, 128, 128}, {8, 2048, 32, 256, 256},  {8, 1024, 8, 64, 64}};
  if (name == "t-sweep") {
    std::vector<bench_shape> out;
    for (int64_t T = 512; T <= 16384; T *= 2) out.push_back({4, T, 16, 128, 128});
    return out;
  }
  // Serving: one token per sequence, the state in and out dominating the bytes.
  if (name == "decode")
    return {{1, 1, 16, 128, 128}, {64, 1, 16, 128, 128}, {256, 1, 16, 128, 128}};
  // Training on packed documents: one row of 16384 tokens, sequences from a few tokens to
  // a few thousand, the chunk edges 64 and 65 among them, in no sorted order.
  if (name == "packed")
    return {{1,
             16384,
             16,
             128,
             128,
             {1500, 64, 3000, 200, 900, 2048, 7, 1200, 500, 1700, 65, 800, 2500, 300, 600, 1000}}};
  throw std::invalid_argument("--shapes '" + name +
                              "' is not one of seed, fla, t-sweep, decode, packed");
}

std::vector<int64_t> parse_sizes(const std::string& text, const std::string& option,
                                 const std::string& layout) {
  const size_t count = size_t(std::count(layout.begin(), layout.end(), ',')) + 1;
  std::vector<int64_t> v;
  // Every part, empty ones included ("1,2," has three, the last empty).
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    start = comma + 1;
    size_t used = 0;
    long long x = 0;
    try {
      x = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || x < 1)
      throw std::invalid_argument(option + " '" + text + "': '" + part +
                                  "' is not a positive integer (want " + layout + ")");
    v.push_back(x);
  }
  if (v.size() != count)
    throw std::invalid_argument(option + " '" + text + "' must have " + std::to_string(count) +
                                " values " + layout);
  return v;
}

bench_shape parse_shape(const std::string& text) {
  const size_t colon = text.find(':');
  const std::vector<int64_t> v = parse_sizes(text.substr(0, colon), "--shape", "B,T,H,K,V");
  bench_shape s{v[0], v[1], v[2], v[3], v[4]};
  if (!shape_in_range(s))
    throw std::invalid_argument("--shape '" + text +
                                "': B·T·H·K·V must be at most 2^62 (sizes would overflow)");
  if (colon == std::string::npos) return s;
  std::string lengths = text.substr(colon + 1);
  std::replace(lengths.begin(), lengths.end(), '+', ',');
  const size_t n = size_t(std::count(lengths.begin(), lengths.end(), ',')) + 1;
  std::string layout = "L1";
  for (size_t i = 2; i <= n; ++i) layout += ",L" + std::to_string(i);
  s.seqlens = parse_sizes(lengths, "--shape", layout);
  try {
    check_packed_shape(s);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--shape '" + text + "': " + e.what());
  }
  return s;
}

void check_packed_shape(const bench_shape& s) {
  if (s.seqlens.empty()) return;
  problem p;
  p.B = s.B;
  p.T = s.T;
  p.cu_seqlens = packed_offsets(s.seqlens);
  check_cu_seqlens(p);
}

bool shape_in_range(const bench_shape& s) {
  int64_t product = 1;
  for (const int64_t part : {s.B, s.T, s.H, s.K, s.V}) {
    if (part < 1 || part > kMaxShapeProduct / product) return false;
    product *= part;
  }
  return true;
}

}  // namespace glabench
