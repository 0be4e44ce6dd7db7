// Backends that compute gla in fp64 correctly (recurrence.hpp, as naive_recurrent) and
// then write one element outside a tensor, for the runner's guard checks. One source,
// compiled once per variant (OVERRUN_PLUGIN_VARIANT), each into its own module:
//   overrun        forward writes o, then one element past its end
//   underrun       forward writes o, then one element before its start
//   overrun_dq     backward writes dq, then one element past its end
//   overrun_input  forward writes one element past the end of its input q
//   inbounds       writes nothing outside its tensors (the control: verify passes)
// and, writing nothing outside its tensors either, for the build description (ABI 1.1):
//   abi_1_0        its table ends where ABI 1.0's did (minor 0, no build member), as a
//                  plugin built against glabench 1.0 gives it
//   unoptimised    built with -O0 by glabench_add_backend (harness/tests/CMakeLists.txt)
#include <cstring>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "recurrence.hpp"

namespace {

using namespace glabench::backend_support;
namespace naive = glabench::naive;

#define VARIANT_IS(name) (std::strcmp(OVERRUN_PLUGIN_VARIANT, #name) == 0)

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD}};

extern const glabench_backend kBackend;

// A value no fp64 output of the fixtures holds, written where nothing may be.
constexpr double kStray = 12345.678;

naive::sizes sizes_of(const glabench_problem& p) {
  return {p.B, p.T, p.H, p.K, p.V, false};
}

int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

glabench_status device_available(glabench_message*) {
  return GLABENCH_OK;
}
glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "gla in fp64 only");
  return GLABENCH_OK;
}
glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message*) {
  *bytes = static_cast<size_t>(
               naive::workspace_values(sizes_of(*p), mode == GLABENCH_MODE_BACKWARD)) *
           sizeof(double);
  return GLABENCH_OK;
}

int64_t token_at(const glabench_problem& p, int64_t b, int64_t h, int64_t D) {
  return (b * p.T * p.H + h) * D;
}
int64_t state_at(const glabench_problem& p, int64_t b, int64_t h) {
  return (b * p.H + h) * p.K * p.V;
}

naive::head<double> head_of(const glabench_problem& p, int64_t b, int64_t h, const DLTensor* q,
                            const DLTensor* k, const DLTensor* v, const DLTensor* g,
                            const DLTensor* h0, DLTensor* o, DLTensor* ht) {
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

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  if (glabench_status s = check_call(kBackend, p, GLABENCH_MODE_FORWARD, a->workspace_bytes, error))
    return s;
  for (int64_t b = 0; b < p->B; ++b)
    for (int64_t h = 0; h < p->H; ++h)
      naive::forward_head(sizes_of(*p), head_of(*p, b, h, a->q, a->k, a->v, a->g, a->h0, a->o, a->ht),
                          p->scale, static_cast<double*>(a->workspace));
  if (VARIANT_IS(overrun)) data_of<double>(a->o)[numel(a->o)] = kStray;
  if (VARIANT_IS(underrun)) data_of<double>(a->o)[-1] = kStray;
  if (VARIANT_IS(overrun_input)) data_of<double>(a->q)[numel(a->q)] = kStray;
  return GLABENCH_OK;
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  if (glabench_status s =
          check_call(kBackend, p, GLABENCH_MODE_BACKWARD, a->workspace_bytes, error))
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
  if (VARIANT_IS(overrun_dq)) data_of<double>(a->dq)[numel(a->dq)] = kStray;
  return GLABENCH_OK;
}

// abi_1_0's table ends where ABI 1.0's did.
constexpr bool kAbi10 = __builtin_strcmp(OVERRUN_PLUGIN_VARIANT, "abi_1_0") == 0;

const glabench_backend kBackend = {GLABENCH_ABI_MAJOR,
                                   kAbi10 ? 0u : GLABENCH_ABI_MINOR,
                                   kAbi10 ? offsetof(glabench_backend, build) : sizeof(glabench_backend),
                                   "test_" OVERRUN_PLUGIN_VARIANT,
                                   "0.0.0",
                                   kDLCPU,
                                   kCapabilities,
                                   sizeof(kCapabilities) / sizeof(kCapabilities[0]),
                                   device_available,
                                   supports,
                                   workspace_size,
                                   forward,
                                   backward};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
