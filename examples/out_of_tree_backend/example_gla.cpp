// example_gla: a complete out-of-tree glabench backend. CPU, gla, fp64 and fp32,
// forward and backward, written as the textbook recurrence, one (batch, head) at a time:
//   S_t = diag(exp g_t) S_{t-1} + k_t v_tᵀ,   o_t = scale · S_tᵀ q_t,   ht = S_T.
// Backward keeps every state S_0..S_T of one head in the workspace, so the workspace is
// (T + 2)·K·V values: simple, not frugal (backends/naive_recurrent checkpoints instead).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"

namespace {

using namespace glabench::backend_support;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_BACKWARD},
};

extern const glabench_backend kBackend;

// Token tensors are [B, T, H, D] and states [B, H, K, V], contiguous.
struct layout {
  int64_t T, H, K, V;
  int64_t tok_k(int64_t b, int64_t t, int64_t h) const { return ((b * T + t) * H + h) * K; }
  int64_t tok_v(int64_t b, int64_t t, int64_t h) const { return ((b * T + t) * H + h) * V; }
  int64_t state(int64_t b, int64_t h) const { return (b * H + h) * K * V; }
};

template <typename real>
const real* in(const DLTensor* t) {
  return t ? data_of<const real>(t) : nullptr;
}
template <typename real>
real* out(DLTensor* t) {
  return t ? data_of<real>(t) : nullptr;
}

// S ← diag(exp g) S + k vᵀ
template <typename real>
void advance(int64_t K, int64_t V, const real* k, const real* v, const real* g, real* S) {
  for (int64_t i = 0; i < K; ++i) {
    const real a = std::exp(g[i]);
    for (int64_t j = 0; j < V; ++j) S[i * V + j] = a * S[i * V + j] + k[i] * v[j];
  }
}

template <typename real>
glabench_status run_forward(const glabench_problem& p, const glabench_forward_args& a) {
  const layout L{p.T, p.H, p.K, p.V};
  const real *q = in<real>(a.q), *k = in<real>(a.k), *v = in<real>(a.v), *g = in<real>(a.g);
  const real* h0 = in<real>(a.h0);  // NULL: S_0 = 0
  real *o = out<real>(a.o), *ht = out<real>(a.ht);
  const real scale = static_cast<real>(p.scale);
  real* S = static_cast<real*>(a.workspace);
  const int64_t KV = p.K * p.V;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h) {
      if (h0)
        std::copy_n(h0 + L.state(b, h), KV, S);
      else
        std::fill_n(S, KV, real(0));
      for (int64_t t = 0; t < p.T; ++t) {
        advance(p.K, p.V, k + L.tok_k(b, t, h), v + L.tok_v(b, t, h), g + L.tok_k(b, t, h), S);
        const real* qt = q + L.tok_k(b, t, h);
        real* ot = o + L.tok_v(b, t, h);
        for (int64_t j = 0; j < p.V; ++j) {
          real acc = 0;
          for (int64_t i = 0; i < p.K; ++i) acc += qt[i] * S[i * p.V + j];
          ot[j] = scale * acc;
        }
      }
      if (ht) std::copy_n(S, KV, ht + L.state(b, h));
    }
  return GLABENCH_OK;
}

template <typename real>
glabench_status run_backward(const glabench_problem& p, const glabench_backward_args& a) {
  const layout L{p.T, p.H, p.K, p.V};
  const real *q = in<real>(a.q), *k = in<real>(a.k), *v = in<real>(a.v), *g = in<real>(a.g);
  const real *h0 = in<real>(a.h0), *d_o = in<real>(a.d_o), *dht = in<real>(a.dht);
  real *dq = out<real>(a.dq), *dk = out<real>(a.dk), *dv = out<real>(a.dv), *dg = out<real>(a.dg);
  real* dh0 = out<real>(a.dh0);
  const real scale = static_cast<real>(p.scale);
  const int64_t KV = p.K * p.V;
  real* states = static_cast<real*>(a.workspace);  // S_0..S_T
  real* G = states + (p.T + 1) * KV;               // adjoint of S_t
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h) {
      if (h0)
        std::copy_n(h0 + L.state(b, h), KV, states);
      else
        std::fill_n(states, KV, real(0));
      for (int64_t t = 0; t < p.T; ++t) {
        std::copy_n(states + t * KV, KV, states + (t + 1) * KV);
        advance(p.K, p.V, k + L.tok_k(b, t, h), v + L.tok_v(b, t, h), g + L.tok_k(b, t, h),
                states + (t + 1) * KV);
      }
      if (dht)
        std::copy_n(dht + L.state(b, h), KV, G);
      else
        std::fill_n(G, KV, real(0));
      for (int64_t t = p.T - 1; t >= 0; --t) {
        const real *qt = q + L.tok_k(b, t, h), *kt = k + L.tok_k(b, t, h);
        const real *gt = g + L.tok_k(b, t, h), *vt = v + L.tok_v(b, t, h);
        const real* dot = d_o + L.tok_v(b, t, h);
        const real *before = states + t * KV, *after = states + (t + 1) * KV;
        for (int64_t i = 0; i < p.K; ++i)  // o_t reads S_t
          for (int64_t j = 0; j < p.V; ++j) G[i * p.V + j] += scale * qt[i] * dot[j];
        for (int64_t i = 0; i < p.K; ++i) {
          real s_do = 0, G_v = 0, G_before = 0;
          for (int64_t j = 0; j < p.V; ++j) {
            s_do += after[i * p.V + j] * dot[j];
            G_v += G[i * p.V + j] * vt[j];
            G_before += G[i * p.V + j] * before[i * p.V + j];
          }
          dq[L.tok_k(b, t, h) + i] = scale * s_do;
          dk[L.tok_k(b, t, h) + i] = G_v;
          dg[L.tok_k(b, t, h) + i] = std::exp(gt[i]) * G_before;
        }
        for (int64_t j = 0; j < p.V; ++j) {
          real k_G = 0;
          for (int64_t i = 0; i < p.K; ++i) k_G += kt[i] * G[i * p.V + j];
          dv[L.tok_v(b, t, h) + j] = k_G;
        }
        for (int64_t i = 0; i < p.K; ++i) {  // G becomes the adjoint of S_{t-1}
          const real decay = std::exp(gt[i]);
          for (int64_t j = 0; j < p.V; ++j) G[i * p.V + j] *= decay;
        }
      }
      if (dh0) std::copy_n(G, KV, dh0 + L.state(b, h));
    }
  return GLABENCH_OK;
}

glabench_status device_available(glabench_message*) {
  return GLABENCH_OK;
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "example_gla runs gla in fp64 and fp32");
  return GLABENCH_OK;
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message*) {
  const int64_t values = mode == GLABENCH_MODE_BACKWARD ? (p->T + 2) * p->K * p->V : p->K * p->V;
  *bytes = static_cast<size_t>(values) * (p->dtype.bits / 8);
  return GLABENCH_OK;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_FORWARD, a->workspace_bytes, error))
      return s;
    return p->dtype.bits == 64 ? run_forward<double>(*p, *a) : run_forward<float>(*p, *a);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, a->workspace_bytes, error))
      return s;
    return p->dtype.bits == 64 ? run_backward<double>(*p, *a) : run_backward<float>(*p, *a);
  });
}

const glabench_backend kBackend = {
    GLABENCH_ABI_MAJOR,
    GLABENCH_ABI_MINOR,
    sizeof(glabench_backend),
    "example_gla",
    "1.0.0",
    kDLCPU,
    kCapabilities,
    sizeof(kCapabilities) / sizeof(kCapabilities[0]),
    device_available,
    supports,
    workspace_size,
    forward,
    backward,
};

}  // namespace

// The one exported symbol (the module is built with hidden visibility).
extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
