// softmax_attn fp64 forward on the CPU, for the checks of bench's --mask (no CPU backend
// of glabench has softmax_attn). One source, compiled once per variant
// (SOFTMAX_PLUGIN_VARIANT), each into its own module:
//   softmax                correct: o and lse, causal or full as the problem says
//   softmax_always_causal  applies the causal mask whatever the problem says: right on a
//                          causal configuration, wrong on a full one, so a full-mask row
//                          must fail its quick verify (the reference is full there)
// o = softmax(scale · q kᵀ + M) v per (b, h), lse = log Σ exp(scale · q kᵀ + M), M the
// causal mask (key s ≤ query t) or none; tensors [B,T,H,D] and lse [B,H,T].
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"

namespace {

using namespace glabench::backend_support;

#define VARIANT_IS(name) (std::strcmp(SOFTMAX_PLUGIN_VARIANT, #name) == 0)

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_SOFTMAX_ATTN, kFloat64, GLABENCH_MODE_FORWARD}};

extern const glabench_backend kBackend;

glabench_status device_available(glabench_message*) {
  return GLABENCH_OK;
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "softmax_attn fp64 forward only");
  return GLABENCH_OK;
}

glabench_status workspace_size(const glabench_problem*, glabench_mode, size_t* bytes,
                               glabench_message*) {
  *bytes = 0;
  return GLABENCH_OK;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  if (glabench_status s = check_call(kBackend, p, GLABENCH_MODE_FORWARD, a->workspace_bytes, error))
    return s;
  const bool causal = p->causal != 0 || VARIANT_IS(softmax_always_causal);
  const int64_t B = p->B, T = p->T, H = p->H, K = p->K, V = p->V;
  const double* q = data_of<const double>(a->q);
  const double* k = data_of<const double>(a->k);
  const double* v = data_of<const double>(a->v);
  double* o = data_of<double>(a->o);
  double* lse = data_of<double>(a->lse);
  std::vector<double> s(T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t keys = causal ? t + 1 : T;
        const double* qt = q + ((b * T + t) * H + h) * K;
        double top = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
          const double* kj = k + ((b * T + j) * H + h) * K;
          double dot = 0;
          for (int64_t i = 0; i < K; ++i) dot += qt[i] * kj[i];
          s[j] = p->scale * dot;
          top = std::max(top, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < keys; ++j) sum += (s[j] = std::exp(s[j] - top));
        double* ot = o + ((b * T + t) * H + h) * V;
        for (int64_t e = 0; e < V; ++e) ot[e] = 0;
        for (int64_t j = 0; j < keys; ++j) {
          const double* vj = v + ((b * T + j) * H + h) * V;
          for (int64_t e = 0; e < V; ++e) ot[e] += s[j] / sum * vj[e];
        }
        if (lse) lse[(b * H + h) * T + t] = top + std::log(sum);
      }
  return GLABENCH_OK;
}

const glabench_backend kBackend = {GLABENCH_ABI_MAJOR,
                                   GLABENCH_ABI_MINOR,
                                   sizeof(glabench_backend),
                                   "test_" SOFTMAX_PLUGIN_VARIANT,
                                   "0.0.0",
                                   kDLCPU,
                                   kCapabilities,
                                   sizeof(kCapabilities) / sizeof(kCapabilities[0]),
                                   device_available,
                                   supports,
                                   workspace_size,
                                   forward,
                                   nullptr};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
