// A correct gla fp64 CPU backend's table members (the recurrence of
// backends/naive_recurrent/recurrence.hpp, as naive_recurrent computes it), for test
// plugins that are right in everything but what they test: writes outside a tensor
// (overrun_plugin.cpp), the ABI 1.2 steps (prepare_plugin.cpp). Each plugin defines its
// table, `kBackend`, and passes it here.
#pragma once

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "recurrence.hpp"

namespace gla_fp64 {

using namespace glabench::backend_support;
namespace naive = glabench::naive;

inline constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD}};
inline constexpr size_t kNumCapabilities = sizeof(kCapabilities) / sizeof(kCapabilities[0]);

inline naive::sizes sizes_of(const glabench_problem& p) {
  return {p.B, p.T, p.H, p.K, p.V, false};
}

inline int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

inline glabench_status device_available(glabench_message*) {
  return GLABENCH_OK;
}
inline glabench_status supports(const glabench_backend& table, const glabench_problem* p,
                                glabench_mode mode, glabench_message* reason) {
  if (!has_capability(table, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "gla in fp64 only");
  return GLABENCH_OK;
}
inline glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                                      glabench_message*) {
  *bytes =
      static_cast<size_t>(naive::workspace_values(sizes_of(*p), mode == GLABENCH_MODE_BACKWARD)) *
      sizeof(double);
  return GLABENCH_OK;
}

inline int64_t token_at(const glabench_problem& p, int64_t b, int64_t h, int64_t D) {
  return (b * p.T * p.H + h) * D;
}
inline int64_t state_at(const glabench_problem& p, int64_t b, int64_t h) {
  return (b * p.H + h) * p.K * p.V;
}

inline naive::head<double> head_of(const glabench_problem& p, int64_t b, int64_t h,
                                   const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                   const DLTensor* g, const DLTensor* h0, DLTensor* o,
                                   DLTensor* ht) {
  naive::head<double> x{};
  x.q = data_of<const double>(q) + token_at(p, b, h, p.K);
  x.k = data_of<const double>(k) + token_at(p, b, h, p.K);
  x.g = data_of<const double>(g) + token_at(p, b, h, p.K);
  x.v = data_of<const double>(v) + token_at(p, b, h, p.V);
  x.h0 = h0 ? data_of<const double>(h0) + state_at(p, b, h) : nullptr;
  x.o = o ? data_of<double>(o) + token_at(p, b, h, p.V) : nullptr;
  x.ht = ht ? data_of<double>(ht) + state_at(p, b, h) : nullptr;
  x.stride_k = p.H * p.K;
  x.stride_v = p.H * p.V;
  return x;
}

inline glabench_status forward(const glabench_backend& table, const glabench_problem* p,
                               const glabench_forward_args* a, glabench_message* error) {
  if (glabench_status s = check_call(table, p, GLABENCH_MODE_FORWARD, a->workspace_bytes, error))
    return s;
  for (int64_t b = 0; b < p->B; ++b)
    for (int64_t h = 0; h < p->H; ++h)
      naive::forward_head(sizes_of(*p),
                          head_of(*p, b, h, a->q, a->k, a->v, a->g, a->h0, a->o, a->ht), p->scale,
                          static_cast<double*>(a->workspace));
  return GLABENCH_OK;
}

inline glabench_status backward(const glabench_backend& table, const glabench_problem* p,
                                const glabench_backward_args* a, glabench_message* error) {
  if (glabench_status s = check_call(table, p, GLABENCH_MODE_BACKWARD, a->workspace_bytes, error))
    return s;
  for (int64_t b = 0; b < p->B; ++b)
    for (int64_t h = 0; h < p->H; ++h) {
      naive::head_grads<double> d{};
      d.d_o = data_of<const double>(a->d_o) + token_at(*p, b, h, p->V);
      d.dht = a->dht ? data_of<const double>(a->dht) + state_at(*p, b, h) : nullptr;
      d.dq = data_of<double>(a->dq) + token_at(*p, b, h, p->K);
      d.dk = data_of<double>(a->dk) + token_at(*p, b, h, p->K);
      d.dg = data_of<double>(a->dg) + token_at(*p, b, h, p->K);
      d.dv = data_of<double>(a->dv) + token_at(*p, b, h, p->V);
      d.dh0 = a->dh0 ? data_of<double>(a->dh0) + state_at(*p, b, h) : nullptr;
      naive::backward_head(sizes_of(*p),
                           head_of(*p, b, h, a->q, a->k, a->v, a->g, a->h0, nullptr, nullptr), d,
                           p->scale, static_cast<double*>(a->workspace));
    }
  return GLABENCH_OK;
}

}  // namespace gla_fp64
