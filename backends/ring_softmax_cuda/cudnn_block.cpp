// cuDNN's fused attention as the ring's 16-bit block (cudnn_block.hpp). Graphs are
// built once per block shape and device (the first call of a shape is untimed: the
// plugin plans every shape of a problem in workspace_size) and then only executed.
#include "cudnn_block.hpp"

#if GLABENCH_RING_HAVE_CUDNN_FRONTEND

#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

// cudnn-frontend's dynamic loading resolves every cuDNN call through this handle.
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}

namespace glabench::ring::cudnn_block {
namespace {

namespace fe = cudnn_frontend;

enum uid : int64_t { Q = 1, K, V, O, STATS, DO, DQ, DK, DV };

std::mutex& lock() {
  static std::mutex m;
  return m;
}

struct loaded {
  bool ok = false;
  std::string why;
};
const loaded& load_once() {
  static const loaded l = [] {
    loaded r;
    for (const char* name : {"libcudnn.so.9", "libcudnn.so"}) {
      if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
        fe::cudnn_dlhandle = h;
        r.ok = true;
        return r;
      }
    }
    const char* e = dlerror();
    r.why = std::string("cuDNN not found (libcudnn.so.9 on the library path): ") + (e ? e : "");
    return r;
  }();
  return l;
}

cudnnHandle_t handle_for_current_device() {
  static std::map<int, cudnnHandle_t> handles;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return nullptr;
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cudnnHandle_t h = nullptr;
  if (fe::detail::create_handle(&h) != CUDNN_STATUS_SUCCESS) return nullptr;
  handles[device] = h;
  return h;
}

// [B,T,H,X] rows as cuDNN's [B,H,S,X] with strides.
std::vector<int64_t> dims(const pair_shape& s, int64_t rows, int X) {
  return {s.B, s.H, rows, X};
}
std::vector<int64_t> token_strides(const pair_shape& s, int X) {
  return {s.T * s.H * X, int64_t(X), int64_t(s.H) * X, 1};
}
std::shared_ptr<fe::graph::Tensor_attributes> tensor(fe::graph::Graph& g, int64_t id,
                                                     const char* name, const pair_shape& s,
                                                     int64_t rows, int X) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_uid(id)
                      .set_name(name)
                      .set_dim(dims(s, rows, X))
                      .set_stride(token_strides(s, X)));
}
// The backward's statistics: packed [B,H,q_len] (cuDNN below 9.26 takes no other).
std::shared_ptr<fe::graph::Tensor_attributes> stats_tensor(fe::graph::Graph& g,
                                                           const pair_shape& s) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_uid(STATS)
                      .set_name("Stats")
                      .set_dim({s.B, s.H, s.q_len, 1})
                      .set_stride({int64_t(s.H) * s.q_len, s.q_len, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

using key = std::tuple<int, bool, int, int, int, int, int64_t, int64_t, int64_t, bool, float, bool>;
key key_of(const pair_shape& s, bool backward) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = -1;  // never device 0's plan
  return {device,   backward,          s.B,     s.H,   s.D, s.V, s.T, s.q_len,
          s.kv_len, s.causal_diagonal, s.scale, s.fp16};
}

struct planned {
  std::shared_ptr<fe::graph::Graph> graph;
  std::string refused;
  int64_t workspace = 0;
};
std::map<key, planned>& cache() {
  static std::map<key, planned> c;
  return c;
}

std::string checked(fe::error_t e, const char* step) {
  return e.is_good() ? std::string() : std::string(step) + ": " + e.get_message();
}

std::string build(fe::graph::Graph& g, cudnnHandle_t h) {
  std::string why;
  if (!(why = checked(g.validate(), "validate")).empty()) return why;
  if (!(why = checked(g.build_operation_graph(h), "build_operation_graph")).empty()) return why;
  if (!(why = checked(g.create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans"))
           .empty())
    return why;
  if (!(why = checked(g.check_support(h), "check_support")).empty()) return why;
  return checked(g.build_plans(h), "build_plans");
}

const planned& plan(const pair_shape& s, bool backward) {
  std::lock_guard<std::mutex> guard(lock());
  auto [it, inserted] = cache().try_emplace(key_of(s, backward));
  planned& p = it->second;
  if (!inserted) return p;
  if (!load_once().ok) {
    p.refused = load_once().why;
    return p;
  }
  cudnnHandle_t h = handle_for_current_device();
  if (!h) {
    p.refused = "cudnnCreate failed";
    return p;
  }
  try {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(s.fp16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    auto q = tensor(*g, Q, "Q", s, s.q_len, s.D);
    auto k = tensor(*g, K, "K", s, s.kv_len, s.D);
    auto v = tensor(*g, V, "V", s, s.kv_len, s.V);
    if (!backward) {
      auto options = fe::graph::SDPA_attributes()
                         .set_name("ring_block")
                         .set_generate_stats(true)
                         .set_attn_scale(s.scale);
      if (s.causal_diagonal) options.set_causal_mask(true);
      auto [o, stats] = g->sdpa(q, k, v, options);
      o->set_uid(O)
          .set_output(true)
          .set_dim(dims(s, s.q_len, s.V))
          .set_stride(token_strides(s, s.V));
      stats->set_uid(STATS)
          .set_output(true)
          .set_data_type(fe::DataType_t::FLOAT)
          .set_dim({s.B, s.H, s.q_len, 1})
          .set_stride({int64_t(s.H) * s.T, s.T, 1, 1});
    } else {
      auto options = fe::graph::SDPA_backward_attributes()
                         .set_name("ring_block_backward")
                         .set_attn_scale(s.scale);
      if (s.causal_diagonal) options.set_causal_mask(true);
      auto o = tensor(*g, O, "O", s, s.q_len, s.V);
      auto d_o = tensor(*g, DO, "dO", s, s.q_len, s.V);
      auto stats = stats_tensor(*g, s);
      auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, options);
      dq->set_uid(DQ)
          .set_output(true)
          .set_dim(dims(s, s.q_len, s.D))
          .set_stride(token_strides(s, s.D));
      dk->set_uid(DK)
          .set_output(true)
          .set_dim(dims(s, s.kv_len, s.D))
          .set_stride(token_strides(s, s.D));
      dv->set_uid(DV)
          .set_output(true)
          .set_dim(dims(s, s.kv_len, s.V))
          .set_stride(token_strides(s, s.V));
    }
    if (std::string why = build(*g, h); !why.empty()) {
      p.refused = "cuDNN refuses the block: " + why;
      return p;
    }
    if (std::string why = checked(g->get_workspace_size(p.workspace), "get_workspace_size");
        !why.empty()) {
      p.refused = why;
      return p;
    }
    p.graph = std::move(g);
  } catch (const std::exception& e) {
    p.refused = std::string("cuDNN: ") + e.what();
  }
  return p;
}

std::string execute(const planned& p, std::unordered_map<int64_t, void*>& pointers, void* workspace,
                    cudaStream_t stream) {
  if (!p.graph) return p.refused.empty() ? "cuDNN block not planned" : p.refused;
  cudnnHandle_t h = handle_for_current_device();
  if (fe::detail::set_stream(h, stream) != CUDNN_STATUS_SUCCESS) return "cudnnSetStream failed";
  return checked(p.graph->execute(h, pointers, workspace), "cuDNN execute");
}

}  // namespace

bool library_loaded(std::string* why) {
  if (!load_once().ok && why) *why = load_once().why;
  return load_once().ok;
}

long library_version() {
  return load_once().ok ? long(fe::detail::get_backend_version()) : 0;
}

std::string plan_forward(const pair_shape& s, int64_t* workspace_bytes) {
  const planned& p = plan(s, false);
  *workspace_bytes = p.workspace;
  return p.refused;
}
std::string plan_backward(const pair_shape& s, int64_t* workspace_bytes) {
  const planned& p = plan(s, true);
  *workspace_bytes = p.workspace;
  return p.refused;
}

std::string run_forward(const pair_shape& s, const void* q, const void* k, const void* v, void* o,
                        float* stats, void* workspace, cudaStream_t stream) {
  std::unordered_map<int64_t, void*> ptr{{Q, const_cast<void*>(q)},
                                         {K, const_cast<void*>(k)},
                                         {V, const_cast<void*>(v)},
                                         {O, o},
                                         {STATS, stats}};
  return execute(plan(s, false), ptr, workspace, stream);
}

std::string run_backward(const pair_shape& s, const void* q, const void* k, const void* v,
                         const void* o, const void* d_o, const float* stats, void* dq, void* dk,
                         void* dv, void* workspace, cudaStream_t stream) {
  std::unordered_map<int64_t, void*> ptr{{Q, const_cast<void*>(q)},
                                         {K, const_cast<void*>(k)},
                                         {V, const_cast<void*>(v)},
                                         {O, const_cast<void*>(o)},
                                         {DO, const_cast<void*>(d_o)},
                                         {STATS, const_cast<float*>(stats)},
                                         {DQ, dq},
                                         {DK, dk},
                                         {DV, dv}};
  return execute(plan(s, true), ptr, workspace, stream);
}

}  // namespace glabench::ring::cudnn_block

#else  // built without the cudnn-frontend headers

namespace glabench::ring::cudnn_block {
namespace {
const char* kNoFrontend =
    "built without the cudnn-frontend headers (scripts/setup.sh installs them where nvcc is found)";
}
bool library_loaded(std::string* why) {
  if (why) *why = kNoFrontend;
  return false;
}
long library_version() {
  return 0;
}
std::string plan_forward(const pair_shape&, int64_t*) {
  return kNoFrontend;
}
std::string plan_backward(const pair_shape&, int64_t*) {
  return kNoFrontend;
}
std::string run_forward(const pair_shape&, const void*, const void*, const void*, void*, float*,
                        void*, cudaStream_t) {
  return kNoFrontend;
}
std::string run_backward(const pair_shape&, const void*, const void*, const void*, const void*,
                         const void*, const float*, void*, void*, void*, void*, cudaStream_t) {
  return kNoFrontend;
}
}  // namespace glabench::ring::cudnn_block

#endif
