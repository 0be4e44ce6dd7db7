// gla backends of ABI 1.5 that compute nothing but record what the harness gave them, for
// the runner's ABI 1.5 fields. One source, compiled once per variant
// (VARLEN_PLUGIN_VARIANT), each into its own module:
//   varlen_state_fp32  declares GLABENCH_FEATURE_VARLEN and GLABENCH_FEATURE_STATE_FP32
//   features_none      a 1.5 table that declares no feature
// Both take gla in fp64, fp32 and bf16, forward and backward. forward writes o = 0 and
// ht = h0 (0 without h0), backward every gradient 0 and dh0 = dht (0 without dht): the
// states come back as the backend got them, in its state dtype. Each exports
// varlen_plugin_seen(), the last call's problem fields and tensors as text, e.g.
//   fwd B=1 T=9 num_seqs=3 state=float32 seqlens=int32 cu_seqlens=0,2,5,9
//   h0=[3,2,4,4]float32 ht=[3,2,4,4]float32
// (one line).
#include <cstring>
#include <string>

#include "accepting_stubs.hpp"
#include "glabench/backend_support.hpp"

namespace {

using namespace glabench::backend_support;

std::string g_seen = "nothing";

std::string dtype_text(DLDataType d) {
  const char* code = d.code == kDLFloat ? "float" : d.code == kDLBfloat ? "bfloat" : "int";
  return code + std::to_string(d.bits);
}

size_t bytes_of(const DLTensor* t) {
  size_t n = t->dtype.bits / 8;
  for (int i = 0; i < t->ndim; ++i) n *= size_t(t->shape[i]);
  return n;
}

std::string tensor_text(const char* name, const DLTensor* t) {
  if (!t) return std::string(" ") + name + "=none";
  std::string shape;
  for (int i = 0; i < t->ndim; ++i) shape += (i ? "," : "") + std::to_string(t->shape[i]);
  return std::string(" ") + name + "=[" + shape + "]" + dtype_text(t->dtype);
}

std::string problem_text(const char* call, const glabench_problem* p, const DLTensor* cu) {
  std::string s = std::string(call) + " B=" + std::to_string(p->B) + " T=" + std::to_string(p->T);
  if (!GLABENCH_HAS_MEMBER(p, glabench_problem, seqlens_dtype)) return s + " (a 1.4 problem)";
  s += " num_seqs=" + std::to_string(p->num_seqs) + " state=" + dtype_text(p->state_dtype);
  if (p->num_seqs > 0) s += " seqlens=" + dtype_text(p->seqlens_dtype);
  s += " cu_seqlens=";
  if (!cu) return s + "none";
  for (int64_t i = 0; i < cu->shape[0]; ++i) {
    const int64_t x =
        cu->dtype.bits == 32 ? data_of<const int32_t>(cu)[i] : data_of<const int64_t>(cu)[i];
    s += (i ? "," : "") + std::to_string(x);
  }
  return s;
}

void zero(DLTensor* t) {
  if (t) std::memset(data_of<char>(t), 0, bytes_of(t));
}

// dst = src where both are given (same shape and dtype), else 0.
void copy_or_zero(DLTensor* dst, const DLTensor* src) {
  if (!dst) return;
  if (src && bytes_of(src) == bytes_of(dst))
    std::memcpy(data_of<char>(dst), data_of<const char>(src), bytes_of(dst));
  else
    zero(dst);
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message*) {
  g_seen =
      problem_text("fwd", p, a->cu_seqlens) + tensor_text("h0", a->h0) + tensor_text("ht", a->ht);
  zero(a->o);
  copy_or_zero(a->ht, a->h0);
  return GLABENCH_OK;
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message*) {
  g_seen = problem_text("bwd", p, a->cu_seqlens) + tensor_text("h0", a->h0) +
           tensor_text("dht", a->dht) + tensor_text("dh0", a->dh0);
  for (DLTensor* t : {a->dq, a->dk, a->dv, a->dg, a->du}) zero(t);
  copy_or_zero(a->dh0, a->dht);
  return GLABENCH_OK;
}

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_BACKWARD}};

constexpr bool kFeatures = __builtin_strcmp(VARLEN_PLUGIN_VARIANT, "varlen_state_fp32") == 0;

const glabench_backend kBackend = {
    .abi_major = GLABENCH_ABI_MAJOR,
    .abi_minor = GLABENCH_ABI_MINOR,
    .struct_size = sizeof(glabench_backend),
    .name = "test_" VARLEN_PLUGIN_VARIANT,
    .version = "0.0.0",
    .device_type = kDLCPU,
    .capabilities = kCapabilities,
    .num_capabilities = sizeof(kCapabilities) / sizeof(kCapabilities[0]),
    .device_available = test_plugin::device_available,
    .supports = test_plugin::supports,
    .workspace_size = test_plugin::workspace_size,
    .forward = forward,
    .backward = backward,
    .features = kFeatures ? GLABENCH_FEATURE_VARLEN | GLABENCH_FEATURE_STATE_FP32 : 0u,
};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}

extern "C" GLABENCH_EXPORT const char* varlen_plugin_seen(void) {
  return g_seen.c_str();
}
