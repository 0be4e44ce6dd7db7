// The fp32 and fp64 backward's dS walk (backward_fp_walks.cuh) on the CPU: the forward on
// the sequence reversed as reversed_tokens.hpp lays it out (q′ = k, k′ = q, v′ = scale·do,
// the gates one token on, h0′ = dht, scale 1) is, on the fp64 reference,
//   - dv, its output read backwards;
//   - dh0 = e^{g_0} ⊙ its final state;
//   - dS_n = e^{g_t} ⊙ R_n by rows, t = dS_factor_token(n), R_n its state before the
//     reversed chunk that holds chunk n: dS_n being dh0 of the tokens after chunk n.
// Ragged and whole lengths, B = 2, realistic, strong and cliff gates.
#define BOOST_TEST_MODULE reversed_tokens
#include "../reversed_tokens.hpp"

#include <algorithm>
#include <boost/test/included/unit_test.hpp>
#include <cmath>

#include "glabench/reference/ops.hpp"
#include "glabench/reference/random_inputs.hpp"

namespace rev = glabench::chunked::reversed;
namespace ref = glabench::reference;
using glabench::gate_kind;
using glabench::op_inputs;
using glabench::problem;
using glabench::tensor;

namespace {

constexpr int kChunk = 64;  // the WMMA kernels' chunk, whose states the dS walk leaves

// Tokens [t0, t1) of x, [B, T, H, D].
tensor tokens(const tensor& x, int64_t t0, int64_t t1) {
  const int64_t B = x.shape[0], T = x.shape[1], HD = x.shape[2] * x.shape[3];
  tensor out({B, t1 - t0, x.shape[2], x.shape[3]});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t i = 0; i < HD; ++i)
        out.data[((b * (t1 - t0)) + t - t0) * HD + i] = x.data[(b * T + t) * HD + i];
  return out;
}

// The reversed sequence's inputs and problem, from reversed_tokens.hpp's maps.
struct reversed_call {
  problem p;
  op_inputs in;
};
reversed_call reverse(const problem& p, const op_inputs& in) {
  reversed_call r{p, {}};
  const int64_t Tp = rev::padded_length(p.T, kChunk);
  r.p.T = Tp, r.p.scale = 1.0;
  r.in.q = tensor(r.p.qk_shape()), r.in.k = tensor(r.p.qk_shape());
  r.in.g = tensor(r.p.qk_shape()), r.in.v = tensor(r.p.v_shape());
  r.in.h0 = *in.dht;
  const int64_t H = p.H, K = p.K, V = p.V;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t tau = 0; tau < Tp; ++tau)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t s = rev::source_token(tau, Tp, p.T), gs = rev::gate_token(tau, Tp, p.T);
        const int64_t to = (b * Tp + tau) * H + h;
        auto from = [&](int64_t t) { return (b * p.T + t) * H + h; };
        for (int64_t c = 0; c < K; ++c) {
          r.in.q.data[to * K + c] = s < 0 ? 0.0 : in.k.data[from(s) * K + c];
          r.in.k.data[to * K + c] = s < 0 ? 0.0 : in.q.data[from(s) * K + c];
          r.in.g.data[to * K + c] = gs < 0 ? 0.0 : in.g.data[from(gs) * K + c];
        }
        for (int64_t c = 0; c < V; ++c)
          r.in.v.data[to * V + c] = s < 0 ? 0.0 : p.scale * in.d_o->data[from(s) * V + c];
      }
  return r;
}

double rel_l2(const std::vector<double>& x, const std::vector<double>& r) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) num += (x[i] - r[i]) * (x[i] - r[i]), den += r[i] * r[i];
  return std::sqrt(num / (den > 0 ? den : 1.0));
}

// e^{g[b, t, h, :]} ⊙ rows of the states x [B, H, K, V] (t < 0: x itself).
std::vector<double> scale_rows(const problem& p, const tensor& g, int64_t t, const tensor& x) {
  std::vector<double> out = x.data;
  if (t < 0) return out;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t c = 0; c < p.K; ++c)
        for (int64_t v = 0; v < p.V; ++v)
          out[((b * p.H + h) * p.K + c) * p.V + v] *=
              std::exp(g.data[((b * p.T + t) * p.H + h) * p.K + c]);
  return out;
}

void check(int64_t T, gate_kind gates, uint64_t seed) {
  problem p;
  p.B = 2, p.T = T, p.H = 2, p.K = 5, p.V = 3, p.scale = 0.7;
  const op_inputs in = glabench::make_random_inputs(p, {gates, true, true, true, seed});
  const auto grads = ref::gla_backward(p, in, ref::formulation::recurrent);
  const reversed_call r = reverse(p, in);
  const auto out = ref::gla_forward(r.p, r.in, ref::formulation::recurrent);
  const int64_t Tp = r.p.T, chunks = Tp / kChunk;

  // dv_s: the output at τ = Tp − 1 − s.
  std::vector<double> dv(grads.dv.data.size());
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t s = 0; s < T; ++s) {
      const int64_t tau = Tp - 1 - s;
      BOOST_TEST_REQUIRE(rev::source_token(tau, Tp, T) == s);
      for (int64_t i = 0; i < p.H * p.V; ++i)
        dv[(b * T + s) * p.H * p.V + i] = out.o.data[(b * Tp + tau) * p.H * p.V + i];
    }
  BOOST_TEST(rel_l2(dv, grads.dv.data) < 1e-12);
  BOOST_TEST(rel_l2(scale_rows(p, in.g, 0, out.ht), grads.dh0.data) < 1e-12);

  // dS_n, as dh0 of the tokens after chunk n (h0 given, so that dh0 is computed).
  for (int n = 0; n < chunks; ++n) {
    const int m = chunks - 1 - n;
    BOOST_TEST_REQUIRE(rev::chunk_of_state(m, chunks) == n);
    tensor R = *in.dht;  // the walk's state before reversed chunk m
    if (m > 0) {
      reversed_call prefix = r;
      prefix.p.T = int64_t(m) * kChunk;
      for (tensor* x : {&prefix.in.q, &prefix.in.k, &prefix.in.g, &prefix.in.v})
        *x = tokens(*x, 0, prefix.p.T);
      R = ref::gla_forward(prefix.p, prefix.in, ref::formulation::recurrent).ht;
    }
    const int64_t t1 = std::min<int64_t>(T, int64_t(n + 1) * kChunk);
    tensor dS = *in.dht;
    if (t1 < T) {
      problem after = p;
      after.T = T - t1;
      op_inputs later;
      later.q = tokens(in.q, t1, T), later.k = tokens(in.k, t1, T);
      later.v = tokens(in.v, t1, T), later.g = tokens(in.g, t1, T);
      later.d_o = tokens(*in.d_o, t1, T), later.dht = in.dht;
      later.h0 = tensor(p.state_shape());
      dS = ref::gla_backward(after, later, ref::formulation::recurrent).dh0;
    }
    BOOST_TEST(rel_l2(scale_rows(p, in.g, rev::dS_factor_token(n, kChunk, T), R), dS.data) < 1e-12,
               "chunk " << n << " of " << chunks);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(maps) {
  BOOST_TEST(rev::padded_length(150, 64) == 192);
  BOOST_TEST(rev::padded_length(128, 64) == 128);
  BOOST_TEST(rev::source_token(0, 192, 150) == -1);    // padding first
  BOOST_TEST(rev::source_token(42, 192, 150) == 149);  // then the last token
  BOOST_TEST(rev::gate_token(42, 192, 150) == -1);     // which takes no gate
  BOOST_TEST(rev::gate_token(191, 192, 150) == 1);     // token 0 takes token 1's
  BOOST_TEST(rev::dS_factor_token(1, 64, 150) == 128);
  BOOST_TEST(rev::dS_factor_token(2, 64, 150) == -1);
}

BOOST_AUTO_TEST_CASE(ragged_realistic) {
  check(150, gate_kind::logsigmoid, 1);
}
BOOST_AUTO_TEST_CASE(whole_chunks_strong) {
  check(128, gate_kind::strong, 2);
}
BOOST_AUTO_TEST_CASE(one_token_and_cliff) {
  check(1, gate_kind::logsigmoid, 3);
  check(131, gate_kind::cliff, 4);
}
