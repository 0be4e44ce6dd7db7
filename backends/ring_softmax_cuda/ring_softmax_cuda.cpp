// The ring-merged softmax attention backend (seed 003): softmax_attn forward (o, lse)
// and backward (dq, dk, dv), causal or not, as blocks merged through their log-sum-exp
// along a ring's schedule. Plugin-ABI glue and the knobs; the schedule is ring_plan.hpp,
// the one-device ring ring_one_gpu.cu, the ring across GPUs ring_ranks.hpp (a call with
// several devices, or one process per rank through ../common/nccl/nccl_link.hpp).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../common/cuda_plugin.hpp"
#include "../common/int_knob.hpp"
#include "../common/packed_offsets.hpp"
#include "cudnn_block.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "launch.hpp"
#include "ring_ranks.hpp"

namespace {

using namespace glabench::backend_support;
using glabench::cuda_plugin::int_knob;
namespace ring = glabench::ring;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_SOFTMAX_ATTN, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_SOFTMAX_ATTN, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_SOFTMAX_ATTN, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_SOFTMAX_ATTN, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_SOFTMAX_ATTN, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_SOFTMAX_ATTN, kBFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_SOFTMAX_ATTN, kFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_SOFTMAX_ATTN, kFloat16, GLABENCH_MODE_BACKWARD},
};

constexpr int kMaxHead = 256;
constexpr int kMaxShards = 64;
constexpr int kMaxRanksPerDevice = 8;

extern const glabench_backend kBackend;

ring::storage storage_of(DLDataType d) {
  return d.bits == 64          ? ring::storage::fp64
         : d.code == kDLBfloat ? ring::storage::bf16
         : d.bits == 16        ? ring::storage::fp16
                               : ring::storage::fp32;
}

// The knobs, read once; a value outside its set is refused rather than silently
// replaced by the default.
struct knobs {
  int shards = 1;
  int ranks_per_device = 1;  // the multi-GPU ring's ranks on each device (one process)
  ring::layout chunking = ring::layout::ring;
  enum class block { automatic, own, cudnn } block_choice = block::automatic;
  std::string error;  // the first knob refused
};
const knobs& knob_values() {
  static const knobs k = [] {
    knobs r;
    r.shards = int_knob("RING_SOFTMAX_CUDA_SHARDS", 1, kMaxShards, 1, &r.error);
    r.ranks_per_device =
        int_knob("RING_SOFTMAX_CUDA_RANKS_PER_DEVICE", 1, kMaxRanksPerDevice, 1, &r.error);
    if (const char* env = std::getenv("RING_SOFTMAX_CUDA_LAYOUT"); env && *env) {
      const std::string v = env;
      if (v == "zigzag")
        r.chunking = ring::layout::zigzag;
      else if (v != "ring" && r.error.empty())
        r.error = "RING_SOFTMAX_CUDA_LAYOUT must be `ring` or `zigzag`, not `" + v + "`";
    }
    if (const char* env = std::getenv("RING_SOFTMAX_CUDA_BLOCK"); env && *env) {
      const std::string v = env;
      if (v == "own")
        r.block_choice = knobs::block::own;
      else if (v == "cudnn")
        r.block_choice = knobs::block::cudnn;
      else if (v != "auto" && r.error.empty())
        r.error = "RING_SOFTMAX_CUDA_BLOCK must be `auto`, `own` or `cudnn`, not `" + v + "`";
    }
    return r;
  }();
  return k;
}

// The ranks of the multi-GPU ring: the call's devices (one process), each holding
// RING_SOFTMAX_CUDA_RANKS_PER_DEVICE consecutive ranks, or this process's rank of
// RING_SOFTMAX_CUDA_NCCL_WORLD (one process per rank). world 1: one device.
ring::ranks::placement placement_of(const glabench_problem* p) {
  ring::ranks::placement w;
  const ring::nccl::process_ranks& k = ring::process_ranks();
  if (k.world > 1) {
    w.world = k.world;
    w.first_rank = k.rank;
    w.devices = {p->num_devices > 0 ? p->device_ids[0] : 0};
  } else {
    for (int i = 0; i < std::max<int>(1, int(p->num_devices)); ++i)
      for (int j = 0; j < knob_values().ranks_per_device; ++j)
        w.devices.push_back(p->num_devices > 0 ? p->device_ids[i] : 0);
    w.world = int(w.devices.size());
  }
  return w;
}
bool across_ranks(const glabench_problem* p) {
  return placement_of(p).world > 1;
}

ring::problem problem_of(const glabench_problem* p) {
  ring::problem r{};
  r.dtype = storage_of(p->dtype);
  r.B = int(p->B);
  r.H = int(p->H);
  r.D = int(p->K);
  r.V = int(p->V);
  r.T = p->T;
  r.scale = p->scale;
  r.causal = p->causal != 0;
  const int world = placement_of(p).world;
  r.shards = world > 1 ? world : knob_values().shards;
  r.chunking = knob_values().chunking;
  r.block = ring::block_kernel::own;
  r.num_seqs = packed_sequences(p);
  return r;
}

// Which kernel computes the blocks: cuDNN for bf16 and fp16 where it is loaded and accepts every
// block shape of the problem (RING_SOFTMAX_CUDA_BLOCK=auto), else the own kernel.
// Decided once per problem and mode; planning cuDNN's graphs here keeps it untimed.
struct block_decision {
  ring::block_kernel block = ring::block_kernel::own;
  std::string why_not_cudnn;
};
block_decision decide_block(const ring::problem& base, glabench_mode mode, bool across) {
  static std::mutex m;
  static std::map<
      std::tuple<int, int, int, int, int, int, int64_t, bool, double, bool, int, int, bool, bool>,
      block_decision>
      decided;
  std::lock_guard<std::mutex> guard(m);
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device))
    return {ring::block_kernel::own, glabench::cuda_plugin::cuda_error(e, "cudaGetDevice")};
  const auto key = std::make_tuple(device, int(base.dtype), base.B, base.H, base.D, base.V, base.T,
                                   base.causal, base.scale, mode == GLABENCH_MODE_BACKWARD,
                                   base.shards, int(base.chunking), across, base.num_seqs > 0);
  if (auto it = decided.find(key); it != decided.end()) return it->second;
  block_decision d;
  if (knob_values().block_choice == knobs::block::own) {
    d.why_not_cudnn = "RING_SOFTMAX_CUDA_BLOCK=own";
  } else if (!ring::is_16bit(base.dtype)) {
    d.why_not_cudnn = "cuDNN blocks are 16-bit only";
  } else if (base.num_seqs > 0 && base.shards > 1) {
    d.why_not_cudnn = "a packed batch on RING_SOFTMAX_CUDA_SHARDS > 1 runs on the own kernel";
  } else if (ring::cudnn_block::library_loaded(&d.why_not_cudnn)) {
    // Planning every block shape's graph now also keeps graph building out of timed calls.
    ring::problem p = base;
    p.block = ring::block_kernel::cudnn;
    // Across GPUs the blocks are the ranks' steps (one per rank and step).
    const auto plan = across ? ring::ranks::plan_cudnn_steps : ring::plan_cudnn_blocks;
    int64_t bytes = 0;
    d.why_not_cudnn = plan(p, false, &bytes);
    if (d.why_not_cudnn.empty() && mode == GLABENCH_MODE_BACKWARD)
      d.why_not_cudnn = plan(p, true, &bytes);
    if (d.why_not_cudnn.empty()) d.block = ring::block_kernel::cudnn;
  }
  decided[key] = d;
  return d;
}

glabench_status device_available(glabench_message* reason) {
  return glabench::cuda_plugin::cuda_device_available(reason);
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "ring_softmax_cuda runs softmax_attn in fp64, fp32, bf16 and fp16");
  if (!knob_values().error.empty())
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, knob_values().error);
  if (p->B < 1 || p->T < 1 || p->H < 1 || p->K < 1 || p->V < 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B, T, H, D and V must be at least 1");
  if (p->K > kMaxHead || p->V > kMaxHead)
    return fail(
        reason, GLABENCH_ERROR_UNSUPPORTED,
        "head sizes up to 256 (D=" + std::to_string(p->K) + ", V=" + std::to_string(p->V) + ")");
  if (p->B * p->H > 65535)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B·H above 65535 does not fit the grid");
  const bool packed = packed_sequences(p) > 0;
  if (packed && p->B != 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "a packed batch has B = 1");
  if (packed && (p->seqlens_dtype.code != kDLInt || p->seqlens_dtype.bits != 32))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "cu_seqlens must be int32");
  const ring::nccl::process_ranks& ranks = ring::process_ranks();
  if (!ranks.error.empty()) return fail(reason, GLABENCH_ERROR_UNSUPPORTED, ranks.error);
  if (ranks.world > 1 && p->num_devices > 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "RING_SOFTMAX_CUDA_NCCL_WORLD: one device per process (its rank's), not " +
                    std::to_string(p->num_devices));
  if (ranks.world > 1 && knob_values().ranks_per_device > 1)
    return fail(
        reason, GLABENCH_ERROR_UNSUPPORTED,
        "RING_SOFTMAX_CUDA_RANKS_PER_DEVICE is for one process; with RING_SOFTMAX_CUDA_NCCL_WORLD "
        "each process is one rank");
  if (across_ranks(p)) {
    if (packed)
      return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                  "packed batches (cu_seqlens) run on one device; the ranks split one sequence");
    std::string why;
    if (ranks.world > 1 && !ring::nccl::library_loaded(&why))
      return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                  "the ring across processes needs NCCL: " + why);
    if (knob_values().shards != 1)
      return fail(
          reason, GLABENCH_ERROR_UNSUPPORTED,
          "RING_SOFTMAX_CUDA_SHARDS is the one-device ring; across ranks the shards are the ranks");
    for (int i = 0; i < p->num_devices; ++i)
      for (int j = 0; j < i; ++j)
        if (p->device_ids[i] == p->device_ids[j])
          return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                      "device " + std::to_string(p->device_ids[i]) +
                          " is listed twice (several ranks on a device: "
                          "RING_SOFTMAX_CUDA_RANKS_PER_DEVICE)");
  }
  if (knob_values().block_choice == knobs::block::cudnn) {
    if (!ring::is_16bit(storage_of(p->dtype)))
      return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                  "RING_SOFTMAX_CUDA_BLOCK=cudnn: cuDNN blocks are 16-bit only");
    std::string why;
    if (!ring::cudnn_block::library_loaded(&why))
      return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "RING_SOFTMAX_CUDA_BLOCK=cudnn: " + why);
  }
  return GLABENCH_OK;
}

// The problem with its block kernel chosen; `cudnn` forced but refused is an error.
bool chosen(const glabench_problem* p, glabench_mode mode, ring::problem* out,
            glabench_message* error) {
  *out = problem_of(p);
  const block_decision d = decide_block(*out, mode, across_ranks(p));
  if (knob_values().block_choice == knobs::block::cudnn && d.block != ring::block_kernel::cudnn) {
    fail(error, GLABENCH_ERROR_UNSUPPORTED, "RING_SOFTMAX_CUDA_BLOCK=cudnn: " + d.why_not_cudnn);
    return false;
  }
  out->block = d.block;
  return true;
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message* error) {
  return guarded(error, [&] {
    ring::problem r;
    if (!chosen(p, mode, &r, error)) return GLABENCH_ERROR_UNSUPPORTED;
    // A backward call needs its own space; the forward call before it needs the forward's.
    // Across GPUs every rank's buffers are the backend's own, made by prepare().
    const auto bytes_of = [&](const ring::problem& x) {
      return mode == GLABENCH_MODE_BACKWARD ? ring::backward_workspace_bytes(x)
                                            : ring::forward_workspace_bytes(x);
    };
    *bytes = across_ranks(p) ? 0 : bytes_of(r);
    // A packed batch whose offsets prepare() did not read runs on the own kernel.
    if (r.num_seqs > 0 && r.block == ring::block_kernel::cudnn) {
      ring::problem own = r;
      own.block = ring::block_kernel::own;
      *bytes = std::max(*bytes, bytes_of(own));
    }
    return GLABENCH_OK;
  });
}

// What the last forward or backward ran, for last_call_report.
struct last_call_info {
  bool any = false, across = false;
  ring::problem problem{};
} g_last;

using glabench::cuda_plugin::finish;

// A packed batch's offsets, read to the host in prepare() (untimed) with the cu_seqlens
// tensor, sizes and dtype they came from, and whether cuDNN took every sequence's block
// within the workspace it asked for. A call takes them only for the same cu_seqlens (the
// ABI runs prepare() again whenever the inputs change). One set, for the process's one
// harness.
struct kept_offsets {
  const void* device = nullptr;
  ring::problem planned{};  // the problem the graphs were planned for (offsets aside)
  bool backward = false;    // and whether the backward's were
  std::vector<int64_t> at;
  std::string why_not_cudnn;  // empty: cuDNN's graphs are ready for every sequence
};
kept_offsets& kept() {
  static kept_offsets k;
  return k;
}

// prepare() of a packed batch on cuDNN: its offsets to the host, checked, and every
// sequence's graph planned (forward, and backward where asked), each within the workspace
// planned for the whole row.
void keep_offsets(const ring::problem& r, const DLTensor* cu, cudaStream_t stream, bool backward) {
  kept() = {};
  kept_offsets k{cu && cu->data ? data_of<void>(cu) : nullptr, r, backward, {}, {}};
  // Offsets that cannot be read, or do not rise from 0 to T, leave the batch to the own
  // kernel, which reads them on the device and clamps them (a CUDA error shows again at
  // the call; the harness refuses such offsets before any call).
  k.why_not_cudnn =
      glabench::cuda_plugin::read_packed_offsets(k.device, r.num_seqs, r.T, false, stream, &k.at);
  for (const bool b : {false, true}) {
    if (!k.why_not_cudnn.empty() || (b && !backward)) continue;
    int64_t bound = 0, most = 0;
    k.why_not_cudnn = ring::plan_cudnn_blocks(r, b, &bound);  // the whole row's block
    ring::problem each = r;
    each.offsets = &k.at;
    if (k.why_not_cudnn.empty()) k.why_not_cudnn = ring::plan_cudnn_blocks(each, b, &most);
    if (k.why_not_cudnn.empty() && most > bound)
      k.why_not_cudnn = "a sequence's block needs more workspace than the whole row's";
  }
  kept() = std::move(k);
}

// A packed batch's blocks: cuDNN's, a block a sequence, on the offsets prepare() kept for
// this cu_seqlens; else the own kernel, or with RING_SOFTMAX_CUDA_BLOCK=cudnn an error.
glabench_status packed_blocks(ring::problem* r, const DLTensor* cu, bool backward,
                              glabench_message* error) {
  if (r->num_seqs == 0) return GLABENCH_OK;
  if (!cu || !cu->data)
    return fail(error, GLABENCH_ERROR_INVALID_ARGUMENT, "a packed batch without cu_seqlens");
  if (r->block != ring::block_kernel::cudnn) return GLABENCH_OK;
  const kept_offsets& k = kept();
  const ring::problem& q = k.planned;
  const bool same = k.device == data_of<void>(cu) && (k.backward || !backward) &&
                    q.num_seqs == r->num_seqs && q.T == r->T && q.dtype == r->dtype &&
                    q.H == r->H && q.D == r->D && q.V == r->V && q.causal == r->causal &&
                    q.scale == r->scale;
  if (same && k.why_not_cudnn.empty()) {
    r->offsets = &k.at;
    return GLABENCH_OK;
  }
  if (knob_values().block_choice == knobs::block::cudnn)
    return fail(error, GLABENCH_ERROR_UNSUPPORTED,
                "RING_SOFTMAX_CUDA_BLOCK=cudnn: " +
                    (same ? k.why_not_cudnn
                          : std::string("a packed batch's offsets are read in prepare()")));
  r->block = ring::block_kernel::own;
  return GLABENCH_OK;
}

// The ABI's arguments as the ring's device pointers.
ring::forward_io forward_io_of(const glabench_forward_args* f) {
  return {data_of<void>(f->q),
          data_of<void>(f->k),
          data_of<void>(f->v),
          data_of<void>(f->o),
          data_of<void>(f->lse),
          f->workspace,
          f->workspace_bytes,
          static_cast<cudaStream_t>(f->stream),
          data_of<const int32_t>(cu_seqlens_of(*f))};
}
ring::backward_io backward_io_of(const glabench_backward_args* bw) {
  return {data_of<void>(bw->q),
          data_of<void>(bw->k),
          data_of<void>(bw->v),
          data_of<void>(bw->o),
          data_of<void>(bw->lse),
          data_of<void>(bw->d_o),
          data_of<void>(bw->dq),
          data_of<void>(bw->dk),
          data_of<void>(bw->dv),
          bw->workspace,
          bw->workspace_bytes,
          static_cast<cudaStream_t>(bw->stream),
          data_of<const int32_t>(cu_seqlens_of(*bw))};
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* f,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_FORWARD, f->workspace_bytes, error))
      return s;
    ring::problem r;
    if (!chosen(p, GLABENCH_MODE_FORWARD, &r, error)) return GLABENCH_ERROR_UNSUPPORTED;
    if (glabench_status s = packed_blocks(&r, cu_seqlens_of(*f), false, error)) return s;
    const ring::forward_io io = forward_io_of(f);
    const bool across = across_ranks(p);
    g_last = {true, across, r};
    return finish(across ? ring::ranks::run_forward(r, io) : ring::run_forward(r, io), "forward",
                  error);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* bw,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, bw->workspace_bytes, error))
      return s;
    ring::problem r;
    if (!chosen(p, GLABENCH_MODE_BACKWARD, &r, error)) return GLABENCH_ERROR_UNSUPPORTED;
    if (glabench_status s = packed_blocks(&r, cu_seqlens_of(*bw), true, error)) return s;
    const ring::backward_io io = backward_io_of(bw);
    const bool across = across_ranks(p);
    g_last = {true, across, r};
    return finish(across ? ring::ranks::run_backward(r, io) : ring::run_backward(r, io), "backward",
                  error);
  });
}

// Across GPUs: each rank's shard onto its device before the timed calls. One device: a
// packed batch on cuDNN's blocks reads its offsets and plans each sequence's graph
// (keep_offsets); else nothing (cuDNN's graphs were planned with the workspace size).
glabench_status prepare(const glabench_problem* p, glabench_mode mode,
                        const glabench_forward_args* f, const glabench_backward_args* bw,
                        glabench_message* error) {
  return guarded(error, [&] {
    ring::problem r;
    if (!across_ranks(p)) {
      kept() = {};
      if (packed_sequences(p) == 0) return GLABENCH_OK;
      if (!chosen(p, mode, &r, error)) return GLABENCH_ERROR_UNSUPPORTED;
      if (r.block != ring::block_kernel::cudnn) return GLABENCH_OK;
      const DLTensor* cu = f ? cu_seqlens_of(*f) : bw ? cu_seqlens_of(*bw) : nullptr;
      void* stream = f ? f->stream : bw ? bw->stream : nullptr;
      keep_offsets(r, cu, static_cast<cudaStream_t>(stream), mode == GLABENCH_MODE_BACKWARD);
      return GLABENCH_OK;
    }
    if (!chosen(p, mode, &r, error)) return GLABENCH_ERROR_UNSUPPORTED;
    std::optional<ring::backward_io> bio;
    if (bw && mode == GLABENCH_MODE_BACKWARD) bio = backward_io_of(bw);
    return finish(ring::ranks::prepare(r, placement_of(p), forward_io_of(f), bio ? &*bio : nullptr),
                  "prepare", error);
  });
}

void release() {
  ring::ranks::release();
  kept() = {};
}

// Across GPUs: every rank's rows of the outputs into the caller's tensors (untimed). One
// device: the calls wrote them there.
glabench_status collect(glabench_message* error) {
  return guarded(error, [&] { return finish(ring::ranks::collect(), "collect", error); });
}

// Which ring ran the last call: across GPUs, per-rank times and the communication hidden.
glabench_status last_call_report(glabench_message* json) {
  return guarded(json, [&] {
    if (!g_last.any) return fail(json, GLABENCH_ERROR_UNSUPPORTED, "no call yet");
    std::string text;
    if (g_last.across) {
      if (glabench_status s = finish(ring::ranks::report_json(&text), "call report", json))
        return s;
      if (text.empty()) return fail(json, GLABENCH_ERROR_UNSUPPORTED, "no call across GPUs yet");
    } else {
      const ring::problem& r = g_last.problem;
      text = "{\"world\":1,\"shards\":" + std::to_string(r.shards) + ",\"layout\":\"" +
             ring::layout_name(r.chunking) + "\",\"block\":\"" +
             (r.block == ring::block_kernel::cudnn ? "cudnn" : "own") +
             "\",\"cudnn_version\":" + std::to_string(ring::cudnn_block::library_version()) + "}";
    }
    write_message(json, text);
    return GLABENCH_OK;
  });
}

// The knobs read here and in ../common/nccl/nccl_link.cpp (README, "Knobs"): results record them
// where set.
constexpr const char* kKnobs[] = {
    "RING_SOFTMAX_CUDA_SHARDS",      "RING_SOFTMAX_CUDA_LAYOUT",
    "RING_SOFTMAX_CUDA_BLOCK",       "RING_SOFTMAX_CUDA_RANKS_PER_DEVICE",
    "RING_SOFTMAX_CUDA_NCCL_WORLD",  "RING_SOFTMAX_CUDA_NCCL_RANK",
    "RING_SOFTMAX_CUDA_NCCL_ID_FILE"};

const glabench_backend kBackend = {
    .abi_major = GLABENCH_ABI_MAJOR,
    .abi_minor = GLABENCH_ABI_MINOR,
    .struct_size = sizeof(glabench_backend),
    .name = "ring_softmax_cuda",
    .version = "0.1.0",
    .device_type = kDLCUDA,
    .capabilities = kCapabilities,
    .num_capabilities = sizeof(kCapabilities) / sizeof(kCapabilities[0]),
    .device_available = device_available,
    .supports = supports,
    .workspace_size = workspace_size,
    .forward = forward,
    .backward = backward,
    .build = GLABENCH_BUILD_INFO_INIT,
    .prepare = prepare,
    .release = release,
    .last_call_report = last_call_report,
    .collect = collect,
    .knobs = kKnobs,
    .num_knobs = std::size(kKnobs),
    .features = GLABENCH_FEATURE_VARLEN,
};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
