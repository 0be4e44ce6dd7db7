// The chunked-fuse CUDA backend (seeds 000/001): gla forward and backward in 64-token
// chunks on tensor cores, and rwkv6 as gla with shifted queries (rwkv6_as_gla.hpp). Plugin-ABI glue
// around the kernels of launch.cu; the CHUNKED_FUSE_CUDA_STAGES knob picks the fused path (default)
// or the seed's five separate stage kernels. A call with several ranks splits the sequence among
// them (sequence_parallel.hpp): the call's devices, times CHUNKED_FUSE_CUDA_RANKS_PER_DEVICE, in
// one process, or one process per rank (a launcher's, or CHUNKED_FUSE_CUDA_NCCL_*).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "../common/cuda_plugin.hpp"
#include "../common/int_knob.hpp"
#include "../common/packed_offsets.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "launch.hpp"
#include "packed_streams.hpp"
#include "rwkv6_as_gla.hpp"
#include "sequence_parallel.hpp"
#include "side_streams.hpp"

namespace {

using namespace glabench::backend_support;
namespace chunked = glabench::chunked;
namespace nccl = glabench::cuda_plugin::nccl;
using glabench::cuda_plugin::finish;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kBFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat16, GLABENCH_MODE_BACKWARD},
};

constexpr int kMaxHead = 256;

extern const glabench_backend kBackend;

chunked::storage storage_of(DLDataType d) {
  if (d.bits == 64) return chunked::storage::fp64;
  if (d.bits == 16) return d.code == kDLBfloat ? chunked::storage::bf16 : chunked::storage::fp16;
  return chunked::storage::fp32;
}

// CHUNKED_FUSE_CUDA_STAGES: `fused` (default) or `separate`; anything else is refused
// rather than silently running the default.
struct stages_knob {
  bool valid = true;
  chunked::stages path = chunked::stages::fused;
  std::string value;
};
const stages_knob& stages_choice() {
  static const stages_knob knob = [] {
    stages_knob k;
    if (const char* env = std::getenv("CHUNKED_FUSE_CUDA_STAGES")) {
      k.value = env;
      if (k.value == "separate")
        k.path = chunked::stages::separate;
      else if (k.value != "fused" && !k.value.empty())
        k.valid = false;
    }
    return k;
  }();
  return knob;
}

// An integer knob, read once: its value (the default where unset or refused) and why it
// was refused.
struct int_choice {
  int value = 1;
  std::string error;
};
int_choice read_choice(const char* name, int lo, int hi) {
  int_choice k;
  k.value = glabench::cuda_plugin::int_knob(name, lo, hi, 1, &k.error);
  return k;
}

// CHUNKED_FUSE_CUDA_RANKS_PER_DEVICE: 1 to 8 consecutive ranks on each of the call's
// devices (default 1), so that the multi-rank code runs on one GPU; anything else refused.
const int_choice& ranks_choice() {
  static const int_choice knob = read_choice("CHUNKED_FUSE_CUDA_RANKS_PER_DEVICE", 1, 8);
  return knob;
}

// CHUNKED_FUSE_CUDA_HEAD_GROUPS: 1, 2 or 4 groups of each rank's heads in a split call
// (default 1), each a call of its own, so that one group's exchange hides behind the
// others' work (sequence_parallel.hpp); H must be a multiple.
const int_choice& groups_choice() {
  static const int_choice knob = [] {
    int_choice k = read_choice("CHUNKED_FUSE_CUDA_HEAD_GROUPS", 1, 4);
    if (k.value == 3) k = {1, "CHUNKED_FUSE_CUDA_HEAD_GROUPS must be 1, 2 or 4, not 3"};
    return k;
  }();
  return knob;
}

// CHUNKED_FUSE_CUDA_FP32_WALK_COLS: 64 or 128, the V columns of an fp32 (and fp16) walk block
// (default: by shape, launch.cu's fp_walk_slab), to compare the two or test either.
const int_choice& walk_cols_choice() {
  static const int_choice knob = [] {
    constexpr const char* name = "CHUNKED_FUSE_CUDA_FP32_WALK_COLS";
    int_choice k;
    k.value = glabench::cuda_plugin::int_knob(name, 64, 128, 0, &k.error);
    if (k.value != 0 && k.value != 64 && k.value != 128)
      k = {0, std::string(name) + " must be 64 or 128, not " + std::to_string(k.value)};
    return k;
  }();
  return knob;
}

// One process per rank: a launcher's variables (torchrun, mpirun, srun), or
// CHUNKED_FUSE_CUDA_NCCL_WORLD, _RANK and _ID_FILE (../common/nccl/nccl_link.hpp).
const nccl::process_ranks& process_ranks() {
  return nccl::process_knobs("CHUNKED_FUSE_CUDA");
}

// Who the ranks are: this process's one rank of the launched world, or the call's devices,
// each taking CHUNKED_FUSE_CUDA_RANKS_PER_DEVICE consecutive ranks.
chunked::sequence::placement placement_of(const glabench_problem* p) {
  const int first_device = p->num_devices > 0 ? p->device_ids[0] : 0;
  if (process_ranks().world > 1) {
    chunked::sequence::placement where;
    where.world = process_ranks().world;
    where.first_rank = process_ranks().rank;
    where.devices = {first_device};
    where.process = &process_ranks();
    where.head_groups = groups_choice().value;
    return where;
  }
  std::vector<int> devices = {first_device};
  if (p->num_devices > 1) devices.assign(p->device_ids, p->device_ids + p->num_devices);
  return chunked::sequence::one_process(devices, ranks_choice().value, groups_choice().value);
}
// The ranks a call splits its sequence among (1: no split).
int64_t ranks_of(const glabench_problem* p) {
  return placement_of(p).world;
}

glabench_status device_available(glabench_message* reason) {
  return glabench::cuda_plugin::cuda_device_available(reason);
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "chunked_fuse_cuda runs gla and rwkv6 in fp64, fp32, bf16 and fp16");
  if (!stages_choice().valid)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "CHUNKED_FUSE_CUDA_STAGES must be `fused` or `separate`, not `" +
                    stages_choice().value + "`");
  if (p->B < 1 || p->T < 1 || p->H < 1 || p->K < 1 || p->V < 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B, T, H, K and V must be at least 1");
  if (p->K > kMaxHead || p->V > kMaxHead)
    return fail(
        reason, GLABENCH_ERROR_UNSUPPORTED,
        "head sizes up to 256 (K=" + std::to_string(p->K) + ", V=" + std::to_string(p->V) + ")");
  if (p->B * p->H > 65535)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B·H above 65535 does not fit the grid");
  if ((p->T + 63) / 64 > 2147483647)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "too many chunks for the grid");
  if (p->op == GLABENCH_OP_RWKV6 && ranks_of(p) > 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "rwkv6 runs on one rank");
  if (packed_sequences(p) > 0 && ranks_of(p) > 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "a packed batch runs on one rank");
  if (storage_of(p->dtype) == chunked::storage::fp16 && ranks_of(p) > 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "fp16 runs on one rank");
  if (!same_dtype(state_dtype_of(p), p->dtype) && !states_in_fp32(p))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "states in the storage dtype, or fp32 at 16-bit storage");
  if (!ranks_choice().error.empty())
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, ranks_choice().error);
  const nccl::process_ranks& launched = process_ranks();
  if (!launched.error.empty()) return fail(reason, GLABENCH_ERROR_UNSUPPORTED, launched.error);
  if (launched.world > 1) {
    if (p->num_devices > 1)
      return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                  "one process per rank takes one device (its rank's), not " +
                      std::to_string(p->num_devices));
    if (ranks_choice().value > 1)
      return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                  "CHUNKED_FUSE_CUDA_RANKS_PER_DEVICE is for one process; with one process per "
                  "rank each process is one rank");
    if (std::string why; !nccl::library_loaded(&why))
      return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                  "the split across processes needs NCCL: " + why);
  }
  if (!groups_choice().error.empty())
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, groups_choice().error);
  if (!walk_cols_choice().error.empty())
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, walk_cols_choice().error);
  if (ranks_of(p) > 1 && p->H % groups_choice().value != 0)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "the heads (H=" + std::to_string(p->H) +
                    ") are not a multiple of "
                    "CHUNKED_FUSE_CUDA_HEAD_GROUPS (" +
                    std::to_string(groups_choice().value) + ")");
  if (ranks_of(p) > 1 && p->T < ranks_of(p))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "a sequence split among " + std::to_string(ranks_of(p)) +
                    " ranks needs at least one token a rank (T=" + std::to_string(p->T) + ")");
  return GLABENCH_OK;
}

chunked::call base_call(const glabench_problem* p, void* workspace, void* stream) {
  chunked::call c{};
  c.dtype = storage_of(p->dtype);
  c.path = stages_choice().path;
  c.B = static_cast<int>(p->B);
  c.H = static_cast<int>(p->H);
  c.K = static_cast<int>(p->K);
  c.V = static_cast<int>(p->V);
  c.T = p->T;
  c.scale = p->scale;
  c.state_fp32 = states_in_fp32(p);
  c.fp32_walk_cols = walk_cols_choice().value;
  c.workspace = workspace;
  c.stream = static_cast<cudaStream_t>(stream);
  return c;
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message*) {
  const int B = static_cast<int>(p->B), H = static_cast<int>(p->H), K = static_cast<int>(p->K),
            V = static_cast<int>(p->V);
  if (ranks_of(p) > 1) {  // the ranks' workspaces are their own (prepare)
    *bytes = 0;
    return GLABENCH_OK;
  }
  const bool backward = mode == GLABENCH_MODE_BACKWARD;
  const chunked::storage dtype = storage_of(p->dtype);
  if (packed_sequences(p) > 0)  // the sequences' calls side by side (packed_streams.hpp)
    *bytes = chunked::packed::workspace_bytes(dtype, stages_choice().path, backward, p->T, H, K, V);
  else
    *bytes = backward
                 ? chunked::backward_workspace_bytes(dtype, B, p->T, H, K, V)
                 : chunked::forward_workspace_bytes(dtype, stages_choice().path, B, p->T, H, K, V);
  if (p->op == GLABENCH_OP_RWKV6)  // the shifted gla's tensors ahead of its workspace
    *bytes = chunked::rwkv6::workspace_bytes(base_call(p, nullptr, nullptr), backward, *bytes);
  return GLABENCH_OK;
}

// The call's tensors (forward's, then backward's where given: the same inputs).
chunked::call call_of(const glabench_problem* p, const glabench_forward_args* f,
                      const glabench_backward_args* bw, void* workspace, void* stream) {
  chunked::call c = base_call(p, workspace, stream);
  if (f) {
    c.q = data_of<void>(f->q), c.k = data_of<void>(f->k), c.v = data_of<void>(f->v);
    c.g = data_of<void>(f->g), c.h0 = data_of<void>(f->h0);
    c.o = data_of<void>(f->o), c.ht = data_of<void>(f->ht);
  }
  if (bw) {
    c.q = data_of<void>(bw->q), c.k = data_of<void>(bw->k), c.v = data_of<void>(bw->v);
    c.g = data_of<void>(bw->g), c.h0 = data_of<void>(bw->h0);
    c.d_o = data_of<void>(bw->d_o), c.dht = data_of<void>(bw->dht);
    c.dq = data_of<void>(bw->dq), c.dk = data_of<void>(bw->dk), c.dv = data_of<void>(bw->dv);
    c.dg = data_of<void>(bw->dg), c.dh0 = data_of<void>(bw->dh0);
  }
  return c;
}

// A packed batch (ABI 1.5 VARLEN): each sequence a call of its own (B = 1, its tokens'
// rows, its h0/ht/dht/dh0 row), side by side on streams of their own (packed_streams.hpp).
// The offsets are read to the host in prepare() (untimed; kept_offsets), so the calls
// launch without waiting and a CUDA graph can capture them. A call on offsets prepare()
// did not see reads them itself: it waits for its stream, as fla's chunk kernels with
// cu_seqlens do, and a CUDA graph cannot capture it.
using sequence_offsets = std::vector<int64_t>;
glabench::cuda_plugin::status read_offsets(const glabench_problem* p, const DLTensor* cu,
                                           cudaStream_t stream, sequence_offsets* out) {
  return glabench::cuda_plugin::read_packed_offsets(cu && cu->data ? data_of<void>(cu) : nullptr,
                                                    packed_sequences(p), p->T,
                                                    p->seqlens_dtype.bits == 64, stream, out);
}

// The offsets prepare() read, with the tensor and sizes they were read from; a call
// takes them only for the same cu_seqlens. The ABI has prepare() run again whenever the
// inputs change (backend.h); a host that rewrote cu_seqlens in place without it would get
// the old offsets. One set, for the process's one harness.
struct kept_offsets {
  const void* device = nullptr;
  int64_t sequences = 0, T = 0;
  sequence_offsets at;
};
kept_offsets& kept() {
  static kept_offsets k;
  return k;
}
glabench::cuda_plugin::status keep_offsets(const glabench_problem* p, const DLTensor* cu,
                                           cudaStream_t stream) {
  kept() = {};
  if (packed_sequences(p) == 0) return {};
  kept_offsets k{data_of<void>(cu), packed_sequences(p), p->T, {}};
  if (glabench::cuda_plugin::status s = read_offsets(p, cu, stream, &k.at); !s.empty()) return s;
  kept() = std::move(k);
  return {};
}

// Sequence i of a packed call: its rows of each token tensor and its state rows.
chunked::call sequence_call(const glabench_problem* p, chunked::call c, const sequence_offsets& at,
                            int64_t i) {
  const size_t elem = p->dtype.bits / 8, state_elem = state_dtype_of(p).bits / 8;
  const int64_t first = at[i];
  const size_t qk = static_cast<size_t>(first) * p->H * p->K * elem,
               vv = static_cast<size_t>(first) * p->H * p->V * elem,
               st = static_cast<size_t>(i) * p->H * p->K * p->V * state_elem;
  auto in = [](const void* x, size_t off) {
    return x ? static_cast<const void*>(static_cast<const char*>(x) + off) : nullptr;
  };
  auto out = [](void* x, size_t off) {
    return x ? static_cast<void*>(static_cast<char*>(x) + off) : nullptr;
  };
  c.B = 1, c.T = at[i + 1] - first;
  c.q = in(c.q, qk), c.k = in(c.k, qk), c.g = in(c.g, qk), c.v = in(c.v, vv);
  c.d_o = in(c.d_o, vv), c.o = out(c.o, vv);
  c.dq = out(c.dq, qk), c.dk = out(c.dk, qk), c.dg = out(c.dg, qk), c.dv = out(c.dv, vv);
  c.h0 = in(c.h0, st), c.dht = in(c.dht, st), c.ht = out(c.ht, st), c.dh0 = out(c.dh0, st);
  return c;
}

// The offsets a packed call runs on: prepare()'s where they are for this cu_seqlens, else
// read now and checked (into `read`); null when the call is not packed.
glabench_status packed_offsets(const glabench_problem* p, const DLTensor* cu, cudaStream_t stream,
                               sequence_offsets& read, const sequence_offsets*& at,
                               glabench_message* error) {
  at = nullptr;
  if (packed_sequences(p) == 0) return GLABENCH_OK;
  const kept_offsets& k = kept();
  if (cu && k.device && k.device == data_of<void>(cu) && k.sequences == packed_sequences(p) &&
      k.T == p->T) {
    at = &k.at;
    return GLABENCH_OK;
  }
  if (glabench_status s = finish(read_offsets(p, cu, stream, &read), "packed offsets", error))
    return s;
  at = &read;
  return GLABENCH_OK;
}

// The gla call c on one rank, `bytes` of workspace at c.workspace: a packed batch's
// sequences (offsets `at`) side by side, or one launch.
glabench_status run_gla(const glabench_problem* p, const chunked::call& c, size_t bytes,
                        const sequence_offsets* at, bool backward, glabench_message* error) {
  const char* what = backward ? "backward launch" : "forward launch";
  auto launch = backward ? chunked::launch_backward : chunked::launch_forward;
  if (!at) return finish(launch(c), what, error);
  return finish(chunked::packed::run(*at, c, backward, c.workspace, bytes, c.stream,
                                     [&](int64_t i, void* workspace, cudaStream_t stream) {
                                       chunked::call one = sequence_call(p, c, *at, i);
                                       one.workspace = workspace;
                                       one.stream = stream;
                                       return launch(one);
                                     }),
                what, error);
}

// rwkv6's gla call on the bf16 walks with launch_before on a side stream meanwhile: o's
// first rows beside the forward walk (which writes the others), or the shifted q and do
// beside the backward's state walk, which the gla call waits for (call::walk_waits) where it
// first reads them.
glabench_status gla_beside_before(const chunked::call& c, chunked::rwkv6::shifted s,
                                  const chunked::rwkv6::sequences& seqs, const void* u,
                                  bool backward, glabench_message* error) {
  namespace cp = glabench::cuda_plugin;
  const char* what = backward ? "rwkv6's shifted q and do beside the state walk"
                              : "rwkv6's first rows beside the walk";
  chunked::side_streams* side = nullptr;
  if (glabench_status st = finish(chunked::side_streams_of_device(&side), what, error)) return st;
  if (glabench_status st = finish(cudaEventRecord(side->fork, c.stream), what, error)) return st;
  chunked::call before = c;
  before.stream = side->streams[0];
  cp::status failed;
  if (cudaError_t e = cudaStreamWaitEvent(before.stream, side->fork, 0))
    return finish(e, what, error);
  if (cudaError_t e = chunked::rwkv6::launch_before(before, s, seqs, u, backward))
    failed = cp::cuda_error(e, backward ? "rwkv6's shift" : "rwkv6's first rows");
  // Joined back whatever happened, so that no capture ends with the side stream open.
  if (cudaError_t e = cudaEventRecord(side->join[0], before.stream)) return finish(e, what, error);
  if (!failed.empty()) {
    if (cudaError_t e = cudaStreamWaitEvent(c.stream, side->join[0], 0))
      return finish(e, what, error);
    return finish(failed, what, error);
  }
  if (backward) s.gla.walk_waits = side->join[0];
  const cudaError_t launched =
      backward ? chunked::launch_backward(s.gla) : chunked::launch_forward(s.gla);
  // The backward's gla call waited for the side stream (walk_waits); the forward's, and one
  // whose launch failed before that, joins it here (a second wait is harmless).
  if (cudaError_t e = cudaStreamWaitEvent(c.stream, side->join[0], 0))
    return finish(e, what, error);
  return finish(launched, backward ? "backward launch" : "forward launch", error);
}

// rwkv6: gla on the queries shifted one token back, between the shift and the terms gla
// has no place for (rwkv6_as_gla.hpp). A packed batch's offsets are checked before any
// launch: the shift and the terms read them on the device.
glabench_status run_rwkv6(const glabench_problem* p, const chunked::call& c, size_t bytes,
                          const DLTensor* cu, const sequence_offsets* at, const DLTensor* u,
                          DLTensor* du, bool backward, glabench_message* error) {
  namespace rwkv6 = chunked::rwkv6;
  if (!u || !u->data || (backward && (!du || !du->data)))
    return fail(error, GLABENCH_ERROR_INVALID_ARGUMENT, "rwkv6 needs u (and du, backward)");
  rwkv6::sequences seqs;
  if (at) seqs = {data_of<void>(cu), p->seqlens_dtype.bits == 64, packed_sequences(p)};
  if (!backward && !at && chunked::decodes(c))  // one token: the decode kernel, bonus and all
    return finish(chunked::launch_decode(c, data_of<void>(u)), "rwkv6 decode", error);
  rwkv6::shifted s = rwkv6::plan(c, backward, at != nullptr, data_of<void>(u));
  // Beside the gla call's first kernels where they read neither (one launch, not packed).
  const bool beside = backward ? !at && chunked::backward_waits_for_inputs(s.gla) : s.on_walk;
  if (beside) {
    if (glabench_status st = gla_beside_before(c, s, seqs, data_of<void>(u), backward, error))
      return st;
  } else {
    if (glabench_status st = finish(rwkv6::launch_before(c, s, seqs, data_of<void>(u), backward),
                                    "rwkv6's shifted queries", error))
      return st;
    // gla's workspace: what follows rwkv6's tensors.
    const size_t carved =
        static_cast<size_t>(static_cast<char*>(s.gla.workspace) - static_cast<char*>(c.workspace));
    if (glabench_status st = run_gla(p, s.gla, bytes - carved, at, backward, error)) return st;
  }
  return finish(backward
                    ? rwkv6::launch_backward_terms(c, s, seqs, data_of<void>(u), data_of<void>(du))
                    : rwkv6::launch_forward_terms(c, s, seqs, data_of<void>(u)),
                "rwkv6's bonus and first-token terms", error);
}

// One rank's call, packed or not, gla or rwkv6, on `bytes` of workspace.
glabench_status run_one_rank(const glabench_problem* p, const chunked::call& c, size_t bytes,
                             const DLTensor* cu, const DLTensor* u, DLTensor* du, bool backward,
                             glabench_message* error) {
  sequence_offsets read;
  const sequence_offsets* at = nullptr;
  if (glabench_status s = packed_offsets(p, cu, c.stream, read, at, error)) return s;
  chunked::call one = c;
  // The backward's parts side by side (launch.hpp's call::pair; a packed batch's calls are
  // already).
  if (backward && !at) {
    chunked::side_streams* side = nullptr;
    if (glabench_status s = finish(chunked::side_streams_of_device(&side), "side streams", error))
      return s;
    one.pair = {side->streams[1], side->fork, side->join[1]};
  }
  if (p->op == GLABENCH_OP_RWKV6) return run_rwkv6(p, one, bytes, cu, at, u, du, backward, error);
  return run_gla(p, one, bytes, at, backward, error);
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* f,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_FORWARD, f->workspace_bytes, error))
      return s;
    const chunked::call c = call_of(p, f, nullptr, f->workspace, f->stream);
    if (ranks_of(p) > 1)
      return finish(chunked::sequence::forward(c), "sequence-parallel forward", error);
    return run_one_rank(p, c, f->workspace_bytes, cu_seqlens_of(*f), f->u, nullptr, false, error);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* bw,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, bw->workspace_bytes, error))
      return s;
    const chunked::call c = call_of(p, nullptr, bw, bw->workspace, bw->stream);
    if (ranks_of(p) > 1)
      return finish(chunked::sequence::backward(c), "sequence-parallel backward", error);
    return run_one_rank(p, c, bw->workspace_bytes, cu_seqlens_of(*bw), bw->u, bw->du, true, error);
  });
}

// Untimed: a split call's ranks get their tokens here; a packed batch's offsets are read
// to the host (kept_offsets).
glabench_status prepare(const glabench_problem* p, glabench_mode mode,
                        const glabench_forward_args* f, const glabench_backward_args* bw,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (ranks_of(p) <= 1) {
      chunked::sequence::release();
      const DLTensor* cu = f ? cu_seqlens_of(*f) : bw ? cu_seqlens_of(*bw) : nullptr;
      void* stream = f ? f->stream : bw ? bw->stream : nullptr;
      // A packed batch's calls, rwkv6's first rows or shift and the backward's dS walk run
      // on side streams: made before a capture.
      chunked::side_streams* side = nullptr;
      if (glabench_status s = finish(chunked::side_streams_of_device(&side), "side streams", error))
        return s;
      return finish(keep_offsets(p, cu, static_cast<cudaStream_t>(stream)), "packed prepare",
                    error);
    }
    if (glabench_status s = supports(p, mode, error)) return s;
    return finish(chunked::sequence::prepare(call_of(p, f, bw, nullptr, nullptr),
                                             mode == GLABENCH_MODE_BACKWARD, placement_of(p)),
                  "sequence-parallel prepare", error);
  });
}

void release() {
  chunked::sequence::release();
  kept() = {};
}

glabench_status collect(glabench_message* error) {
  return guarded(error, [&] {
    return finish(chunked::sequence::collect(), "sequence-parallel collect", error);
  });
}

// A split call's phases per rank (sequence_parallel.hpp's last_call_json).
glabench_status last_call_report(glabench_message* json) {
  std::string text;
  if (glabench_status s =
          finish(chunked::sequence::last_call_json(&text), "split call report", json))
    return s;
  if (text.empty()) return fail(json, GLABENCH_ERROR_UNSUPPORTED, "no split call yet");
  write_message(json, text);
  return GLABENCH_OK;
}

// The knobs (above; README): results record them where set.
constexpr const char* kKnobs[] = {
    "CHUNKED_FUSE_CUDA_STAGES",        "CHUNKED_FUSE_CUDA_RANKS_PER_DEVICE",
    "CHUNKED_FUSE_CUDA_HEAD_GROUPS",   "CHUNKED_FUSE_CUDA_NCCL_WORLD",
    "CHUNKED_FUSE_CUDA_NCCL_RANK",     "CHUNKED_FUSE_CUDA_NCCL_ID_FILE",
    "CHUNKED_FUSE_CUDA_FP32_WALK_COLS"};

const glabench_backend kBackend = {
    .abi_major = GLABENCH_ABI_MAJOR,
    .abi_minor = GLABENCH_ABI_MINOR,
    .struct_size = sizeof(glabench_backend),
    .name = "chunked_fuse_cuda",
    .version = "0.1.0",
    .device_type = kDLCUDA,
    .capabilities = kCapabilities,
    .num_capabilities = sizeof(kCapabilities) / sizeof(kCapabilities[0]),
    .device_available = device_available,
    .supports = supports,
    .workspace_size = workspace_size,
    .forward = forward,
    .backward = backward,
    .prepare = prepare,
    .release = release,
    .last_call_report = last_call_report,
    .collect = collect,
    .knobs = kKnobs,
    .num_knobs = std::size(kKnobs),
    // Packed batches (each sequence a call of its own) and fp32 states at 16-bit storage
    // (h0, ht, dht, dh0), on every path.
    .features = GLABENCH_FEATURE_VARLEN | GLABENCH_FEATURE_STATE_FP32,
};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
