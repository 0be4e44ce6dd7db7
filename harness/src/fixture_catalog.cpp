#include "fixture_catalog.hpp"

#include <cmath>
#include <stdexcept>

#include "glabench/reference/ops.hpp"

namespace glabench {
namespace {

// FNV-1a: a seed from the recipe name that is the same on every platform.
uint64_t seed_from_name(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

struct shape {
  int64_t B, T, H, K, V;
};

problem make_problem(op_kind op, shape s, bool causal = true) {
  return {op, s.B, s.T, s.H, s.K, s.V, 1.0 / std::sqrt(static_cast<double>(s.K)), causal, {}};
}

// The sequences of the packed-batch fixtures, in this order in their one row: a single
// token at each end, lengths around a 16-token sub-chunk (15, 16, 17) and a 64-token
// chunk (63, 64, 65), and 300 tokens over five chunks (the last of 44).
constexpr int64_t kPackedLengths[] = {1, 17, 64, 15, 300, 65, 16, 63, 1};

// B = 1, T = 542: the sequences above packed in one row (cu_seqlens), N = 9 states.
problem packed_problem(op_kind op, int64_t H, int64_t K, int64_t V, bool causal = true) {
  std::vector<int64_t> cu = {0};
  for (int64_t n : kPackedLengths) cu.push_back(cu.back() + n);
  problem p = make_problem(op, {1, cu.back(), H, K, V}, causal);
  p.cu_seqlens = std::move(cu);
  return p;
}

random_problem_options options(gate_kind gates = gate_kind::logsigmoid, bool h0 = true,
                               bool d_o = true, bool dht = true) {
  random_problem_options o;
  o.gates = gates;
  o.with_h0 = h0;
  o.with_do = d_o;
  o.with_dht = dht;
  return o;
}

void add_recurrent_set(std::vector<fixture_recipe>& out, op_kind op) {
  const std::string n(op_name(op));
  const auto lg = gate_kind::logsigmoid;
  out.push_back(
      {n + "_basic", "h0, do and dht present", make_problem(op, {2, 16, 2, 8, 8}), options()});
  out.push_back({n + "_t1", "a single token", make_problem(op, {1, 1, 2, 4, 4}), options()});
  out.push_back(
      {n + "_odd_t_k_ne_v", "odd T and K != V", make_problem(op, {1, 17, 2, 6, 10}), options()});
  out.push_back({n + "_k100", "K = 100, the seed's head size", make_problem(op, {1, 8, 1, 100, 16}),
                 options()});
  out.push_back({n + "_no_decay", "g = 0: no decay", make_problem(op, {1, 12, 2, 4, 6}),
                 options(gate_kind::zero)});
  out.push_back({n + "_reset", "g = -30: the state is forgotten at every token",
                 make_problem(op, {1, 12, 2, 4, 6}), options(gate_kind::reset)});
  out.push_back({n + "_mixed_gates",
                 "key rows 0-15 realistic gates, 16-31 also g = -30 at every 11th token, "
                 "32-39 g about -7 a token: chunks and rows whose decay leaves the rescaling "
                 "range go step by step, beside ones that do not",
                 make_problem(op, {1, 37, 2, 40, 24}), options(gate_kind::mixed)});
  out.push_back(
      {n + "_no_h0", "no initial state", make_problem(op, {2, 9, 1, 5, 4}), options(lg, false)});
  out.push_back({n + "_no_dht", "do without dht", make_problem(op, {1, 10, 2, 4, 4}),
                 options(lg, true, true, false)});
  out.push_back({n + "_forward_only", "no cotangents: forward checks only",
                 make_problem(op, {1, 20, 2, 8, 8}), options(lg, true, false, false)});
  out.push_back({n + "_tiny", "small enough for the full finite-difference Jacobian",
                 make_problem(op, {1, 3, 1, 2, 3}), options()});
  out.push_back(
      {n + "_long", "T = 300: long-range decay", make_problem(op, {1, 300, 1, 8, 8}), options()});
  out.push_back({n + "_k256", "K = V = 256, the largest head the CUDA backends take",
                 make_problem(op, {1, 5, 1, 256, 256}), options(lg, false, true, false)});
  out.push_back({n + "_strong_gates",
                 "gates by key row modulo 4 over 64-token chunks of 16-token sub-chunks: "
                 "realistic; about -160 a token (-1e4 over a chunk); realistic with g = -30 "
                 "at one token of each chunk (7, 16, 47, 63 or 0); exactly 0. T = 80: two chunks",
                 make_problem(op, {1, 80, 1, 20, 8}), options(gate_kind::strong)});
  out.push_back({n + "_reference_edges",
                 "gates at the bounds of the bf16 walk's one reference a chunk: key rows 0 mod 4 "
                 "sum their 16-token sub-chunks (log2) to -40, -10, -10, -10 (a chunk of -70); "
                 "-30, -30, -20, -20 (-100); -60, -5, -5, -5 (a steep sub-chunk); -23.5 each "
                 "(-94) by 64-token chunk, the other rows realistic. T = 260: five chunks",
                 make_problem(op, {1, 260, 1, 4, 4}), options(gate_kind::reference_edges)});
}

// Packed variable-length batches (schema version 2): nine sequences of 1 to 300 tokens in
// one row, each from its own h0 into its own ht, with do and dht. K and V are small (4,
// the least the GPU walks take) to keep the files small: 542 tokens of fp64.
void add_packed_set(std::vector<fixture_recipe>& out, op_kind op) {
  const std::string n(op_name(op));
  out.push_back({n + "_varlen",
                 "a packed batch: sequences of 1, 17, 64, 15, 300, 65, 16, 63 and 1 tokens in "
                 "one row (cu_seqlens), each from its own h0 into its own ht; H = 2",
                 packed_problem(op, 2, 4, 4), options()});
  if (op != op_kind::gla) return;
  out.push_back({n + "_varlen_strong_gates",
                 "the packed batch of gla_varlen with the gates of gla_strong_gates, their "
                 "64-token chunks counted from each sequence's start: key rows realistic; about "
                 "-160 a token; realistic with g = -30 at token 7 (row 2) or 16 (row 6) of each "
                 "chunk; exactly 0",
                 packed_problem(op, 1, 8, 4), options(gate_kind::strong)});
}

// T around the 64-token chunk of a chunked kernel (16-token sub-chunks): a ragged last
// chunk, an exact one, one past it, and three chunks.
void add_chunk_set(std::vector<fixture_recipe>& out, op_kind op) {
  const std::string n(op_name(op));
  out.push_back({n + "_t63", "T = 63: one 64-token chunk short of a token, K != V",
                 make_problem(op, {1, 63, 1, 16, 8}), options()});
  out.push_back({n + "_t64", "T = 64: exactly one 64-token chunk",
                 make_problem(op, {1, 64, 2, 8, 8}), options()});
  out.push_back({n + "_t65", "T = 65: one 64-token chunk and one token, K != V",
                 make_problem(op, {1, 65, 1, 8, 24}), options()});
  out.push_back({n + "_t130", "T = 130: two 64-token chunks and a third of 2 tokens, K = 12",
                 make_problem(op, {1, 130, 1, 12, 8}), options()});
}

void add_softmax_set(std::vector<fixture_recipe>& out) {
  const op_kind op = op_kind::softmax_attn;
  out.push_back(
      {"softmax_attn_causal", "causal", make_problem(op, {2, 16, 2, 8, 8}, true), options()});
  out.push_back({"softmax_attn_noncausal", "non-causal", make_problem(op, {2, 16, 2, 8, 8}, false),
                 options()});
  out.push_back({"softmax_attn_odd_t_d_ne_v", "odd T and D != V",
                 make_problem(op, {1, 17, 2, 6, 10}, true), options()});
  out.push_back(
      {"softmax_attn_t1", "a single token", make_problem(op, {1, 1, 2, 4, 4}, true), options()});
  out.push_back({"softmax_attn_tiny", "small enough for the full finite-difference Jacobian",
                 make_problem(op, {1, 4, 1, 3, 2}, false), options()});
  out.push_back({"softmax_attn_forward_only", "no cotangents: forward checks only",
                 make_problem(op, {1, 20, 2, 8, 8}, true),
                 options(gate_kind::logsigmoid, false, false, false)});
  out.push_back({"softmax_attn_varlen",
                 "causal over a packed batch: sequences of 1, 17, 64, 15, 300, 65, 16, 63 and 1 "
                 "tokens in one row (cu_seqlens), each attending only within itself; H = 2",
                 packed_problem(op, 2, 4, 4, true), options()});
  out.push_back({"softmax_attn_varlen_noncausal",
                 "non-causal over the packed batch of softmax_attn_varlen: each token attends "
                 "to every token of its own sequence; H = 1, D = 8",
                 packed_problem(op, 1, 8, 4, false), options()});
}

}  // namespace

std::vector<fixture_recipe> fixture_recipes(std::string_view preset) {
  std::vector<fixture_recipe> out;
  if (preset == "small") {
    add_recurrent_set(out, op_kind::gla);
    add_chunk_set(out, op_kind::gla);
    add_packed_set(out, op_kind::gla);
    add_recurrent_set(out, op_kind::rwkv6);
    add_packed_set(out, op_kind::rwkv6);
    add_softmax_set(out);
  } else if (preset == "bench") {
    for (op_kind op : {op_kind::gla, op_kind::rwkv6, op_kind::softmax_attn}) {
      const std::string n(op_name(op));
      out.push_back({n + "_seed_b4_t1024_h4_d100", "the seed's shape",
                     make_problem(op, {4, 1024, 4, 100, 100}), options()});
      out.push_back({n + "_b2_t1024_h4_d128", "the accuracy shape of the CUDA backends",
                     make_problem(op, {2, 1024, 4, 128, 128}), options()});
    }
    // The committed packed softmax batch at a head size cuDNN's blocks take (multiples of
    // 8; the committed D = 4 runs on ring_softmax_cuda's own kernel).
    out.push_back({"softmax_attn_varlen_d16",
                   "the packed batch of softmax_attn_varlen, causal, at D = V = 16",
                   packed_problem(op_kind::softmax_attn, 2, 16, 16, true), options()});
    for (op_kind op : {op_kind::gla, op_kind::rwkv6}) {
      const std::string n(op_name(op));
      // Decoding (T = 1, h0 given) at the decode kernel's variants (backends/common/
      // parallel_scan/decode_kernel.cuh): rows a thread 8, 16 (K = 100, masked) and 32, and
      // V not a multiple of 4 (its strided form).
      out.push_back({n + "_decode_b3_k64", "one token, K = V = 64",
                     make_problem(op, {3, 1, 2, 64, 64}), options()});
      out.push_back({n + "_decode_b8_k100_v30", "one token, K = 100, V = 30",
                     make_problem(op, {8, 1, 2, 100, 30}), options()});
      out.push_back({n + "_decode_b4_k256", "one token, K = V = 256",
                     make_problem(op, {4, 1, 2, 256, 256}), options()});
      // The bulk-copy kernel (decode_bulk_kernel.cuh) from no h0, and with fewer key rows
      // than its four row groups.
      out.push_back({n + "_decode_b5_k3_v8_no_h0", "one token, K = 3, V = 8, no initial state",
                     make_problem(op, {5, 1, 2, 3, 8}), options(gate_kind::logsigmoid, false)});
      out.push_back({n + "_b2_t1024_h4_d128_decay_tail",
                     "the accuracy shape under the bench's strong regime, g = -exp(x), "
                     "x ~ N(-0.5,1): some 16-token sub-chunks' gates sum below -96 (log2) in "
                     "a feature, in either half of K",
                     make_problem(op, {2, 1024, 4, 128, 128}), options(gate_kind::decay_tail)});
      out.push_back({n + "_k256_t130", "K = V = 256 over three 64-token chunks (the last of 2)",
                     make_problem(op, {1, 130, 2, 256, 256}), options()});
      out.push_back({n + "_b3_t100_d16",
                     "three sequences of 100 tokens (the last chunk of 36), h0, do and dht: a "
                     "GPU walk's rows past one sequence's end beside the next one's first",
                     make_problem(op, {3, 100, 2, 16, 16}), options()});
      out.push_back({n + "_t1000_h2_d64",
                     "two heads over 1000 tokens (the last chunk of 40): a GPU backend with few "
                     "blocks splits the sequence, and a segment ends on the ragged chunk",
                     make_problem(op, {1, 1000, 2, 64, 64}), options()});
      // The committed fixtures of these cases have shapes (K = 5, V = 6) that the GPU
      // walks, which need K and V multiples of 4 (rows of whole 8-byte vectors in bf16,
      // 16-byte in fp32), hand to their fallbacks.
      out.push_back({n + "_no_h0_t300_d32", "no initial state, at a shape the GPU walks take",
                     make_problem(op, {1, 300, 2, 32, 32}), options(gate_kind::logsigmoid, false)});
      out.push_back({n + "_no_decay_t200_d16",
                     "g = 0 at every token, at a shape the GPU walks take",
                     make_problem(op, {1, 200, 2, 16, 16}), options(gate_kind::zero)});
      out.push_back({n + "_reset_t200_d16", "g = -30 at every token, at a shape the GPU walks take",
                     make_problem(op, {1, 200, 2, 16, 16}), options(gate_kind::reset)});
      // The packed batch at a head size fla's chunk kernels take (their backward needs V > 8).
      out.push_back({n + "_varlen_d16",
                     "the packed batch of the committed varlen fixtures at K = V = 16",
                     packed_problem(op, 2, 16, 16), options()});
      out.push_back({n + "_v192_t300_d32",
                     "V = 192 over K = 32 and 300 tokens: the GPU walks split it, with V past 128",
                     make_problem(op, {1, 300, 2, 32, 192}), options()});
    }
  } else {
    throw std::invalid_argument("unknown fixture preset '" + std::string(preset) +
                                "' (expected small or bench)");
  }
  for (auto& r : out) r.opts.seed = seed_from_name(r.name);
  return out;
}

fixture make_fixture(const fixture_recipe& recipe) {
  fixture f;
  f.description = recipe.description;
  f.prob = recipe.prob;
  f.inputs = make_random_inputs(recipe.prob, recipe.opts);
  f.expected = reference::forward(f.prob, f.inputs);
  if (f.inputs.d_o) f.expected_grads = reference::backward(f.prob, f.inputs);
  return f;
}

}  // namespace glabench
