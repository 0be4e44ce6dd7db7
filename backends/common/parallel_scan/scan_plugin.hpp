// Plugin-ABI glue the backends built on these kernels share: the storage of a dtype,
// their size limits and the kernel arguments from the ABI's (the CUDA device check and
// errors: ../cuda_plugin.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "../cuda_plugin.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "scan_args.hpp"

namespace glabench::parallel_scan {

inline storage storage_of(DLDataType d) {
  if (d.bits == 64) return storage::fp64;
  if (d.bits == 16) return d.code == kDLBfloat ? storage::bf16 : storage::fp16;
  return storage::fp32;
}

using cuda_plugin::cuda_device_available;
using cuda_plugin::finish;

// What ABI 1.5 lets the kernels be offered (glabench_backend.features): packed batches,
// and fp32 states at 16-bit storage.
inline constexpr uint32_t kFeatures = GLABENCH_FEATURE_VARLEN | GLABENCH_FEATURE_STATE_FP32;

// The sequences the kernels walk: B, or a packed batch's N.
inline int64_t sequences_of(const glabench_problem* p) {
  const int64_t packed = backend_support::packed_sequences(p);
  return packed > 0 ? packed : p->B;
}

// Every token of the batch (B·T; a packed batch has B = 1).
inline int64_t tokens_of(const glabench_problem* p) {
  return p->B * p->T;
}

// The sizes the kernels take: every size ≥ 1, heads up to kMaxHeadSize, sequences·H
// within the grid's y dimension; a packed batch's offsets in int32, and states in the
// storage dtype or (at bf16 and fp16) fp32.
inline glabench_status check_sizes(const glabench_problem* p, glabench_message* reason) {
  using backend_support::fail;
  if (p->B < 1 || p->T < 1 || p->H < 1 || p->K < 1 || p->V < 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B, T, H, K and V must be at least 1");
  if (p->K > kMaxHeadSize || p->V > kMaxHeadSize)
    return fail(
        reason, GLABENCH_ERROR_UNSUPPORTED,
        "head sizes up to 256 (K=" + std::to_string(p->K) + ", V=" + std::to_string(p->V) + ")");
  if (sequences_of(p) * p->H > 65535)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "sequences·H above 65535 does not fit the grid's y dimension");
  if (backend_support::packed_sequences(p) > 0 &&
      (p->seqlens_dtype.code != kDLInt || p->seqlens_dtype.bits != 32))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "cu_seqlens must be int32");
  if (!backend_support::same_dtype(backend_support::state_dtype_of(p), p->dtype) &&
      !backend_support::states_in_fp32(p))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "states in the storage dtype, or fp32 at 16-bit storage");
  return GLABENCH_OK;
}

// The backward's workspace for the problem's tokens and sequences.
inline size_t backward_workspace_bytes(recurrence op, const glabench_problem* p) {
  return backward_workspace_bytes(op, storage_of(p->dtype), tokens_of(p), sequences_of(p), p->H,
                                  p->K);
}

// The launch's knobs (knobs.hpp, `<prefix>WIDTH` …) each take one of a few values; any
// other is refused here, naming the variable, rather than forcing nothing in silence.
inline glabench_status check_knobs(const char* prefix, glabench_message* reason) {
  struct choice {
    const char* suffix;
    const char* values[3];
    const char* text;
  };
  static constexpr choice kChoices[] = {{"WIDTH", {"1", "2", "4"}, "1, 2 or 4"},
                                        {"ROW_CHUNK", {"8", "16"}, "8 or 16"},
                                        {"STRIP", {"8", "16"}, "8 or 16"},
                                        {"FP32_STATE", {"32", "64"}, "32 or 64"},
                                        {"DECODE_REGISTERS", {"1"}, "1"}};
  for (const choice& c : kChoices) {
    const std::string name = std::string(prefix) + c.suffix;
    const char* env = std::getenv(name.c_str());
    if (!env || !*env) continue;
    bool allowed = false;
    for (const char* v : c.values) allowed = allowed || (v && std::string(v) == env);
    if (!allowed)
      return backend_support::fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                                   name + " must be " + c.text + ", not `" + env + "`");
  }
  return GLABENCH_OK;
}

inline scan_args base_args(const glabench_problem* p, void* workspace, void* stream) {
  scan_args a{};
  a.B = sequences_of(p);
  a.T = p->T;
  a.state_fp32 = backend_support::states_in_fp32(p);
  a.H = p->H;
  a.K = p->K;
  a.V = p->V;
  a.scale = p->scale;
  a.workspace = workspace;
  a.stream = static_cast<cudaStream_t>(stream);
  return a;
}

inline scan_args forward_args(const glabench_problem* p, const glabench_forward_args* f) {
  using backend_support::data_of;
  scan_args a = base_args(p, f->workspace, f->stream);
  a.cu_seqlens = data_of<const int32_t>(backend_support::cu_seqlens_of(*f));
  a.q = data_of<void>(f->q);
  a.k = data_of<void>(f->k);
  a.v = data_of<void>(f->v);
  a.g = data_of<void>(f->g);
  a.u = data_of<void>(f->u);
  a.h0 = data_of<void>(f->h0);
  a.o = data_of<void>(f->o);
  a.ht = data_of<void>(f->ht);
  return a;
}

inline scan_args backward_args(const glabench_problem* p, const glabench_backward_args* bw) {
  using backend_support::data_of;
  scan_args a = base_args(p, bw->workspace, bw->stream);
  a.cu_seqlens = data_of<const int32_t>(backend_support::cu_seqlens_of(*bw));
  a.q = data_of<void>(bw->q);
  a.k = data_of<void>(bw->k);
  a.v = data_of<void>(bw->v);
  a.g = data_of<void>(bw->g);
  a.u = data_of<void>(bw->u);
  a.h0 = data_of<void>(bw->h0);
  a.d_o = data_of<void>(bw->d_o);
  a.dht = data_of<void>(bw->dht);
  a.dq = data_of<void>(bw->dq);
  a.dk = data_of<void>(bw->dk);
  a.dv = data_of<void>(bw->dv);
  a.dg = data_of<void>(bw->dg);
  a.du = data_of<void>(bw->du);
  a.dh0 = data_of<void>(bw->dh0);
  return a;
}

}  // namespace glabench::parallel_scan
