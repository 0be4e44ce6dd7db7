// gla by its recurrence (docs/design.md §1):
//   S_t = diag(exp(g_t)) S_{t-1} + k_tᵀ v_t,   o_t = scale · q_t S_t.
// Backward walks the tokens in reverse with G, the adjoint of S_t:
//   G_T = dht;  G_t += scale q_tᵀ do_t;  dq_t = scale S_t do_t;  dk_t = G_t v_t;
//   dv_t = k_t G_t;  dg_t = exp(g_t) ⊙ rowsum(G_t ⊙ S_{t-1});  G_{t-1} = diag(exp(g_t)) G_t.
//
// A state's columns never meet: column j of S and G depends only on column j of v and
// do. So one (b, h) of a long problem with few of them runs as several tasks, each a
// block of columns (the bench's quick verify checks one head at a time at long T). dq, dk
// and dg sum over the columns: each block sums its own, and the blocks' sums are added in
// block order. The reverse pass needs every S_t: reverse_by_checkpoints (ops_internal.hpp)
// recomputes them in O(√T) states' memory, those of one forward pass.
#include <algorithm>
#include <cmath>
#include <vector>

#include "glabench/reference/parallel_for.hpp"
#include "layout.hpp"
#include "ops_internal.hpp"

namespace glabench::reference {
namespace {

// Columns [first, first + count) of one (b, h)'s state.
struct head_columns {
  int64_t b, h, first, count;
};

// The column blocks a (b, h) splits into: up to 8, of 16 columns or more, for a long
// problem of fewer than 8 (b, h) (T·K·V ≥ 2^28: T ≥ 16384 at K = V = 128); else one, which
// sums the columns in order. By the problem alone, never the machine, so that a result is
// the same everywhere (the committed fixtures are reproduced bit for bit).
int64_t column_blocks(const problem& p) {
  if (p.B * p.H >= 8 || p.T * p.K * p.V < (int64_t{1} << 28)) return 1;
  return std::clamp<int64_t>(p.V / 16, 1, 8);
}

head_columns columns_of(const problem& p, int64_t task, int64_t blocks) {
  const int64_t bh = task / blocks, block = task % blocks;
  const int64_t first = p.V * block / blocks, last = p.V * (block + 1) / blocks;
  return {bh / p.H, bh % p.H, first, last - first};
}

// Advances S ([K][c.count]) over tokens [t0, t1): writes o's columns when `o` is given and
// the state after each token to states[(t − t0 + 1)·K·count] when `states` is.
void walk(const problem& p, const op_inputs& in, const head_columns& c, int64_t t0, int64_t t1,
          std::vector<double>& S, tensor* o, double* states) {
  const int64_t K = p.K, n = c.count;
  for (int64_t t = t0; t < t1; ++t) {
    const double* q = in.q.ptr() + token_offset(p, c.b, t, c.h, K);
    const double* k = in.k.ptr() + token_offset(p, c.b, t, c.h, K);
    const double* g = in.g.ptr() + token_offset(p, c.b, t, c.h, K);
    const double* v = in.v.ptr() + token_offset(p, c.b, t, c.h, p.V) + c.first;
    for (int64_t i = 0; i < K; ++i) {
      const double decay = std::exp(g[i]);
      for (int64_t j = 0; j < n; ++j) S[i * n + j] = decay * S[i * n + j] + k[i] * v[j];
    }
    if (o) {
      double* out = o->ptr() + token_offset(p, c.b, t, c.h, p.V) + c.first;
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < K; ++i) acc += q[i] * S[i * n + j];
        out[j] = p.scale * acc;
      }
    }
    if (states) std::copy(S.begin(), S.end(), states + (t - t0 + 1) * K * n);
  }
}

// A state's columns between a [B,H,K,V] tensor and a [K][count] block.
void load_columns(const problem& p, const tensor& from, const head_columns& c,
                  std::vector<double>& S) {
  const double* at = from.ptr() + state_offset(p, c.b, c.h) + c.first;
  for (int64_t i = 0; i < p.K; ++i) std::copy_n(at + i * p.V, c.count, S.begin() + i * c.count);
}
void store_columns(const problem& p, const std::vector<double>& S, const head_columns& c,
                   tensor& to) {
  double* at = to.ptr() + state_offset(p, c.b, c.h) + c.first;
  for (int64_t i = 0; i < p.K; ++i) std::copy_n(S.begin() + i * c.count, c.count, at + i * p.V);
}

// Where one column block's dq, dk and dg go ([B,T,H,K] each): the gradients themselves
// when the block is the whole state (`whole`: dq scaled, dg decayed); else the block's own
// sums, unscaled and not decayed, which the blocks' sum finishes.
struct column_sums {
  tensor *dq, *dk, *dg;
  bool whole;
};

// The reverse pass of one column block: dv's columns and dh0's, and its dq, dk, dg.
void backward_columns(const problem& p, const op_inputs& in, const head_columns& c,
                      op_gradients& grad, const column_sums& sums) {
  const tensor& d_o = *in.d_o;
  const int64_t K = p.K, n = c.count, kv = K * n;
  std::vector<double> S(kv, 0.0), G(kv, 0.0);
  if (in.h0) load_columns(p, *in.h0, c, S);
  if (in.dht) load_columns(p, *in.dht, c, G);
  auto advance = [&](int64_t t0, int64_t t1, std::vector<double>& at, double* states) {
    walk(p, in, c, t0, t1, at, nullptr, states);
  };
  reverse_by_checkpoints(
      p.T, S, advance, [&](int64_t t, const double* S_prev, const double* S_now) {
        const int64_t tk = token_offset(p, c.b, t, c.h, K);
        const int64_t tv = token_offset(p, c.b, t, c.h, p.V) + c.first;
        const double *q = in.q.ptr() + tk, *k = in.k.ptr() + tk, *g = in.g.ptr() + tk;
        const double *v = in.v.ptr() + tv, *dout = d_o.ptr() + tv;
        for (int64_t i = 0; i < K; ++i) {
          double dq = 0, dk = 0, dg = 0;
          for (int64_t j = 0; j < n; ++j) {
            double& Gij = G[i * n + j];
            Gij += p.scale * q[i] * dout[j];
            dq += dout[j] * S_now[i * n + j];
            dk += Gij * v[j];
            dg += Gij * S_prev[i * n + j];
          }
          sums.dq->ptr()[tk + i] = sums.whole ? p.scale * dq : dq;
          sums.dk->ptr()[tk + i] = dk;
          sums.dg->ptr()[tk + i] = sums.whole ? std::exp(g[i]) * dg : dg;
        }
        for (int64_t j = 0; j < n; ++j) {
          double dv = 0;
          for (int64_t i = 0; i < K; ++i) dv += k[i] * G[i * n + j];
          grad.dv.ptr()[tv + j] = dv;
        }
        for (int64_t i = 0; i < K; ++i) {
          const double decay = std::exp(g[i]);
          for (int64_t j = 0; j < n; ++j) G[i * n + j] *= decay;
        }
      });
  if (in.h0) store_columns(p, G, c, grad.dh0);
}

}  // namespace

op_outputs gla_forward_recurrent(const problem& p, const op_inputs& in) {
  op_outputs out = allocate_outputs(p);
  const int64_t blocks = column_blocks(p);
  parallel_for(p.B * p.H * blocks, [&](int64_t task) {
    const head_columns c = columns_of(p, task, blocks);
    std::vector<double> S(p.K * c.count, 0.0);
    if (in.h0) load_columns(p, *in.h0, c, S);
    walk(p, in, c, 0, p.T, S, &out.o, nullptr);
    store_columns(p, S, c, out.ht);
  });
  return out;
}

op_gradients gla_backward_recurrent(const problem& p, const op_inputs& in) {
  require_cotangent(in);
  op_gradients grad = allocate_gradients(p, in.h0.has_value());
  const int64_t blocks = column_blocks(p);
  if (blocks == 1) {
    const column_sums whole{&grad.dq, &grad.dk, &grad.dg, true};
    parallel_for(p.B * p.H,
                 [&](int64_t bh) { backward_columns(p, in, columns_of(p, bh, 1), grad, whole); });
    return grad;
  }
  std::vector<tensor> parts(3 * blocks, tensor(p.qk_shape()));
  parallel_for(p.B * p.H * blocks, [&](int64_t task) {
    const int64_t b = task % blocks;
    backward_columns(p, in, columns_of(p, task, blocks), grad,
                     {&parts[3 * b], &parts[3 * b + 1], &parts[3 * b + 2], false});
  });
  // The blocks' sums, added in block order.
  parallel_for(p.B * p.T, [&](int64_t bt) {
    const int64_t b = bt / p.T, t = bt % p.T;
    for (int64_t h = 0; h < p.H; ++h) {
      const int64_t tk = token_offset(p, b, t, h, p.K);
      const double* g = in.g.ptr() + tk;
      for (int64_t i = 0; i < p.K; ++i) {
        double dq = 0, dk = 0, dg = 0;
        for (int64_t k = 0; k < blocks; ++k) {
          dq += parts[3 * k].ptr()[tk + i];
          dk += parts[3 * k + 1].ptr()[tk + i];
          dg += parts[3 * k + 2].ptr()[tk + i];
        }
        grad.dq.ptr()[tk + i] = p.scale * dq;
        grad.dk.ptr()[tk + i] = dk;
        grad.dg.ptr()[tk + i] = std::exp(g[i]) * dg;
      }
    }
  });
  return grad;
}

}  // namespace glabench::reference
