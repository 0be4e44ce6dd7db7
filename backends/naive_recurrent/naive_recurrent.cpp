// The naive recurrent backend: the plugin-ABI glue around recurrence.hpp. CPU only,
// gla and rwkv6, fp64, fp32, bf16 and fp16 (16-bit calls run in fp32: widened_call.hpp,
// with fp32 states), forward and backward, packed variable-length batches too (ABI 1.5's
// GLABENCH_FEATURE_VARLEN).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "recurrence.hpp"
#include "widened_call.hpp"

namespace {

using namespace glabench::backend_support;
namespace naive = glabench::naive;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kBFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat16, GLABENCH_MODE_BACKWARD},
};

extern const glabench_backend kBackend;

naive::sizes sizes_of(const glabench_problem& p) {
  return {p.B, p.T, p.H, p.K, p.V, p.op == GLABENCH_OP_RWKV6};
}

// One sequence: its first token in the tensors' token rows (B·T of them), its length, and
// its state row. B of them, or N of a packed batch (tokens [cu_seqlens[n], cu_seqlens[n+1])
// of the one row, state row n).
struct sequence {
  int64_t first, tokens, state;
};

std::vector<sequence> sequences_of(const glabench_problem& p, const DLTensor* cu_seqlens) {
  std::vector<sequence> out;
  const int64_t packed = packed_sequences(&p);
  if (packed == 0) {
    for (int64_t b = 0; b < p.B; ++b) out.push_back({b * p.T, p.T, b});
    return out;
  }
  if (!cu_seqlens) throw std::invalid_argument("a packed batch without cu_seqlens");
  auto at = [&](int64_t i) {
    return cu_seqlens->dtype.bits == 32 ? int64_t(data_of<const int32_t>(cu_seqlens)[i])
                                        : data_of<const int64_t>(cu_seqlens)[i];
  };
  for (int64_t n = 0; n < packed; ++n) out.push_back({at(n), at(n + 1) - at(n), n});
  return out;
}

glabench_status device_available(glabench_message*) {
  return GLABENCH_OK;
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "naive_recurrent runs gla and rwkv6 in fp64, fp32, bf16 and fp16");
  return GLABENCH_OK;
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message*) {
  const size_t value_bytes = p->dtype.bits == 64 ? 8 : 4;  // 16-bit calls run in fp32
  *bytes =
      static_cast<size_t>(naive::workspace_values(sizes_of(*p), mode == GLABENCH_MODE_BACKWARD)) *
      value_bytes;
  return GLABENCH_OK;
}

// Offsets of (sequence, h) into token and state tensors.
int64_t token_at(const glabench_problem& p, const sequence& s, int64_t h, int64_t D) {
  return (s.first * p.H + h) * D;
}
int64_t state_at(const glabench_problem& p, const sequence& s, int64_t h) {
  return (s.state * p.H + h) * p.K * p.V;
}

// The sizes of one sequence.
naive::sizes sizes_of(const glabench_problem& p, const sequence& s) {
  naive::sizes n = sizes_of(p);
  n.T = s.tokens;
  return n;
}

template <typename real>
naive::head<real> head_of(const glabench_problem& p, const sequence& s, int64_t h,
                          const DLTensor* q, const DLTensor* k, const DLTensor* v,
                          const DLTensor* g, const DLTensor* u, const DLTensor* h0, DLTensor* o,
                          DLTensor* ht) {
  naive::head<real> x{};
  x.q = data_of<const real>(q) + token_at(p, s, h, p.K);
  x.k = data_of<const real>(k) + token_at(p, s, h, p.K);
  x.g = data_of<const real>(g) + token_at(p, s, h, p.K);
  x.v = data_of<const real>(v) + token_at(p, s, h, p.V);
  x.u = u ? data_of<const real>(u) + h * p.K : nullptr;
  x.h0 = h0 ? data_of<const real>(h0) + state_at(p, s, h) : nullptr;
  x.o = o ? data_of<real>(o) + token_at(p, s, h, p.V) : nullptr;
  x.ht = ht ? data_of<real>(ht) + state_at(p, s, h) : nullptr;
  x.stride_k = p.H * p.K;
  x.stride_v = p.H * p.V;
  return x;
}

// Each sequence and head on its own: a packed batch's sequences each start from their
// own h0 row (or zero) and end in their own ht row. The workspace, sized for T tokens,
// holds any one sequence's.
template <typename real>
glabench_status run_forward(const glabench_problem& p, const glabench_forward_args& a) {
  real* S = static_cast<real*>(a.workspace);
  for (const sequence& s : sequences_of(p, cu_seqlens_of(a)))
    for (int64_t h = 0; h < p.H; ++h)
      naive::forward_head(sizes_of(p, s),
                          head_of<real>(p, s, h, a.q, a.k, a.v, a.g, a.u, a.h0, a.o, a.ht),
                          static_cast<real>(p.scale), S);
  return GLABENCH_OK;
}

// du sums over every sequence, packed or not.
template <typename real>
glabench_status run_backward(const glabench_problem& p, const glabench_backward_args& a) {
  if (a.du) std::fill_n(data_of<real>(a.du), p.H * p.K, real(0));
  for (const sequence& s : sequences_of(p, cu_seqlens_of(a)))
    for (int64_t h = 0; h < p.H; ++h) {
      naive::head_grads<real> d{};
      d.d_o = data_of<const real>(a.d_o) + token_at(p, s, h, p.V);
      d.dht = a.dht ? data_of<const real>(a.dht) + state_at(p, s, h) : nullptr;
      d.dq = data_of<real>(a.dq) + token_at(p, s, h, p.K);
      d.dk = data_of<real>(a.dk) + token_at(p, s, h, p.K);
      d.dg = data_of<real>(a.dg) + token_at(p, s, h, p.K);
      d.dv = data_of<real>(a.dv) + token_at(p, s, h, p.V);
      d.du = a.du ? data_of<real>(a.du) + h * p.K : nullptr;
      d.dh0 = a.dh0 ? data_of<real>(a.dh0) + state_at(p, s, h) : nullptr;
      naive::backward_head(sizes_of(p, s),
                           head_of<real>(p, s, h, a.q, a.k, a.v, a.g, a.u, a.h0, nullptr, nullptr),
                           d, static_cast<real>(p.scale), static_cast<real*>(a.workspace));
    }
  return GLABENCH_OK;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_FORWARD, a->workspace_bytes, error))
      return s;
    if (p->dtype.bits == 64) return run_forward<double>(*p, *a);
    if (p->dtype.bits == 32) return run_forward<float>(*p, *a);
    naive::widened_call w;
    glabench_forward_args x = naive::copy_of(*a);
    x.q = w.in(a->q), x.k = w.in(a->k), x.v = w.in(a->v), x.g = w.in(a->g), x.u = w.in(a->u);
    x.h0 = w.in(a->h0), x.o = w.out(a->o), x.ht = w.out(a->ht);
    if (glabench_status s = run_forward<float>(naive::copy_of(*p), x)) return s;
    w.narrow();
    return GLABENCH_OK;
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, a->workspace_bytes, error))
      return s;
    if (p->dtype.bits == 64) return run_backward<double>(*p, *a);
    if (p->dtype.bits == 32) return run_backward<float>(*p, *a);
    naive::widened_call w;
    glabench_backward_args x = naive::copy_of(*a);
    x.q = w.in(a->q), x.k = w.in(a->k), x.v = w.in(a->v), x.g = w.in(a->g), x.u = w.in(a->u);
    x.h0 = w.in(a->h0), x.d_o = w.in(a->d_o), x.dht = w.in(a->dht);
    x.dq = w.out(a->dq), x.dk = w.out(a->dk), x.dv = w.out(a->dv), x.dg = w.out(a->dg);
    x.du = w.out(a->du), x.dh0 = w.out(a->dh0);
    if (glabench_status s = run_backward<float>(naive::copy_of(*p), x)) return s;
    w.narrow();
    return GLABENCH_OK;
  });
}

const glabench_backend kBackend = {
    .abi_major = GLABENCH_ABI_MAJOR,
    .abi_minor = GLABENCH_ABI_MINOR,
    .struct_size = sizeof(glabench_backend),
    .name = "naive_recurrent",
    .version = "1.0.0",
    .device_type = kDLCPU,
    .capabilities = kCapabilities,
    .num_capabilities = sizeof(kCapabilities) / sizeof(kCapabilities[0]),
    .device_available = device_available,
    .supports = supports,
    .workspace_size = workspace_size,
    .forward = forward,
    .backward = backward,
    .features = GLABENCH_FEATURE_VARLEN | GLABENCH_FEATURE_STATE_FP32,
};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
