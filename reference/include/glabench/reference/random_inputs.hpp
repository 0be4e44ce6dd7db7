// Deterministic random problems, the same on every platform (std::normal_distribution
// is implementation-defined, so we draw normals ourselves). Used by the fixture
// generator, the tests, the finite-difference checker and the benchmarks.
#pragma once

#include <cstdint>

#include "glabench/reference/problem.hpp"

namespace glabench {

// splitmix64 for bits, Box–Muller for normals. Counter-based: normal number n of a seed
// (n = 0, 1, …, the order normal() draws them in) is a function of the seed and n alone,
// so a tensor's normals are drawn in parallel and equal the sequential draw bit for bit.
class normal_rng {
 public:
  explicit normal_rng(uint64_t seed) : seed_(seed) {}
  // The next normal.
  double normal() { return normal_at(drawn_++); }
  // The next t.numel() normals, times stddev, into t (on every hardware thread).
  void fill_normal(tensor& t, double stddev = 1.0);
  // Takes the next n normals without drawing them; returns the number of the first, for
  // normal_at.
  uint64_t take(uint64_t n) {
    drawn_ += n;
    return drawn_ - n;
  }
  // Normal number n: the (n mod 2)'th of Box–Muller pair n / 2, which takes 64-bit words
  // n − n mod 2 and that + 1.
  double normal_at(uint64_t n) const;

 private:
  uint64_t seed_, drawn_ = 0;
};

enum class gate_kind {
  logsigmoid,  // g = log σ(x), x ~ N(2,1): realistic gates, mostly in (−1, 0), mean ≈ −0.18
  zero,        // g = 0: no decay
  reset,       // g = −30: the state is forgotten at every token
  mixed,       // by key row block of 16: realistic gates; −30 at every 11th token;
               // strong decay (log σ − 7, about −7.2 a token)
  strong,      // by key row modulo 4, for 64-token chunks of 16-token sub-chunks:
               // 0 realistic; 1 log σ − 160 (about −160 a token, −1e4 over a chunk);
               // 2 realistic but −30 at one token of each 64-token chunk, at 7, 16,
               // 47, 63 or 0 by the row's rank (mid, first and last of a sub-chunk,
               // last and first of a chunk); 3 exactly 0
  reference_edges,  // at key rows ≡ 0 mod 4, by 64-token chunk c mod 4, the log2 sums of
                    // its four 16-token sub-chunks: −40, −10, −10, −10 (a chunk of −70);
                    // −30, −30, −20, −20 (−100); −60, −5, −5, −5 (one steep sub-chunk);
                    // −23.5 each (−94); the other rows realistic. The bounds of the bf16
                    // walk's one reference a chunk (≥ −96 over it; a sub-chunk below −56
                    // or all above −24 decide alone)
  // The bench's gate regimes besides logsigmoid (harness/src/gate_regime.hpp names them):
  model,       // g = log σ(x) / 16, x ~ N(0,1): GLA's gate-logit normaliser, mean ≈ −0.05
  fla,         // g = log σ(x), x ~ N(0,1): fla's benchmarks and tests, mean ≈ −0.81
  decay_tail,  // g = −exp(x), x ~ N(−0.5,1): decays with a long tail, mean ≈ −1.0
  cliff,       // logsigmoid, but −30 at every feature of token t where t % 53 == 17, and
               // exactly 0 at every token of feature k where k % 8 == 3 (zeros win)
};

// Where the cliff regime puts its −30 tokens and its all-zero features.
inline bool cliff_reset_token(int64_t t) {
  return t % 53 == 17;
}
inline bool cliff_zero_feature(int64_t k) {
  return k % 8 == 3;
}

struct random_problem_options {
  gate_kind gates = gate_kind::logsigmoid;
  bool with_h0 = true;
  bool with_do = true;
  bool with_dht = true;
  uint64_t seed = 0;
};

// q, k scaled by K^-0.25 so that q·k is of order one; v, h0, d_o, dht standard normal.
// States are of p.state_shape() (N of them in a packed batch), and the gate kinds that
// depend on the token's index take its place within its sequence.
op_inputs make_random_inputs(const problem& p, const random_problem_options& opts);

}  // namespace glabench
