// Drives one backend on one problem at one storage dtype through the plugin ABI: puts
// the fp64 host inputs into the backend's memory in its dtype, poisons every output
// with NaN before each call (an unwritten element then fails verification), calls
// forward / backward with the harness's workspace and stream, and brings the results
// back as fp64 host tensors.
//
// Every tensor sits between two guard regions of kGuardBytes filled with a canary
// pattern (the data pointer stays 256-byte aligned on CUDA). forward() and backward()
// check them after each call; a changed guard is a backend_call_error naming the
// tensor ("... wrote past the end of output 'o'").
//
// ABI 1.5 (docs/design.md §3): a packed variable-length batch (problem.cu_seqlens) goes
// only to a backend whose table declares GLABENCH_FEATURE_VARLEN (any other refuses it
// beforehand: unsupported), with cu_seqlens as a tensor of its own (int32; int64 from
// T = 2^31), guarded like every tensor; the states (h0, ht, dh0, dht) take
// loaded_backend::state_dtype.
//
// The ABI 1.2 and 1.3 steps, where the table has them (docs/design.md §3): the backend's
// prepare() after every upload of inputs (the calls that follow use exactly those
// tensors), collect() after the calls and before any output is read, release() when the
// runner is destroyed, and last_call_report() on request.
// Tensors live on device_ids[0]; the list goes to the backend in glabench_problem.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_loader.hpp"
#include "device_context.hpp"
#include "dtype.hpp"
#include "glabench/reference/problem.hpp"
#include "timed_outputs.hpp"

namespace glabench {

class backend_call_error : public std::runtime_error {
 public:
  // in_call: returned by a call (workspace_size, forward, backward) on a problem the
  // backend had accepted, rather than by device_available() or supports() beforehand.
  // A refusal in a call is a failure, not a skip: the backend said it could run this.
  backend_call_error(glabench_status status, const std::string& what, bool in_call = false)
      : std::runtime_error(what), status_(status), in_call_(in_call) {}
  glabench_status status() const { return status_; }
  bool in_call() const { return in_call_; }
  // Refused before any call: the case is unsupported or unavailable, not failed.
  bool refused_beforehand() const {
    return !in_call_ &&
           (status_ == GLABENCH_ERROR_NO_DEVICE || status_ == GLABENCH_ERROR_UNSUPPORTED);
  }

 private:
  glabench_status status_;
  bool in_call_;
};

// "available", or "unavailable: why": for a CUDA backend first whether this machine has
// a usable GPU at all (cuda_device_count's reason), then the backend's device_available().
// Calls the plugin: in a worker, or in-process with --no-isolate.
std::string availability_here(const loaded_backend& b);

class backend_runner {
 public:
  // Bytes of canary before and after each tensor's data; a multiple of 256, so a
  // cudaMalloc'd data pointer keeps its 256-byte alignment.
  static constexpr size_t kGuardBytes = 256;

  // Throws backend_call_error: GLABENCH_ERROR_NO_DEVICE when the backend cannot run on
  // this machine (or a listed device is absent), GLABENCH_ERROR_UNSUPPORTED (with the
  // backend's reason) when it refuses the problem in the given mode, when the problem is
  // not offered to it (loaded_backend::not_offered: the reason alone), or when a host
  // backend is given more than one device. A host backend runs with device_ids {0},
  // whatever one device is listed.
  backend_runner(const loaded_backend& backend, const problem& p, dtype d, bool has_h0,
                 bool need_backward, const std::vector<int32_t>& device_ids = {0});
  backend_runner(const backend_runner&) = delete;
  backend_runner& operator=(const backend_runner&) = delete;
  // Calls the backend's release(), where it has one.
  ~backend_runner();

  // Upload, poison, call, download. backward() runs forward first (it passes the
  // forward's o and lse to the backend) and reads in.d_o and in.dht.
  op_outputs forward(const op_inputs& in);
  op_gradients backward(const op_inputs& in);

  // The same in pieces, for timing: prepare() uploads the inputs (the cotangents only
  // when asked), allocates the outputs and workspaces once and then calls the backend's
  // own prepare() (mode BACKWARD with both argument sets when the cotangents are given,
  // else FORWARD); launches touch nothing else (no allocation, no poisoning, no copies).
  void prepare(const op_inputs& in, bool with_cotangents);
  // NaN into every output's data and the canary into its guards, then a wait.
  void poison_outputs();
  // NaN into every output's data only, enqueued on the stream (no wait): the bench's
  // cheap poison before each sample.
  void poison_output_data();
  void launch_forward();
  void launch_backward();
  // Reads back the guard regions of every tensor (only those bytes: on CUDA, two small
  // copies each, synchronizing the stream) and throws backend_call_error
  // (GLABENCH_ERROR_RUNTIME) naming each tensor whose guards changed since they were
  // last written, and the launches since the last check that could have done it. Not
  // for timed regions: call it after the launches, outside the timing.
  void check_guards();
  // The backend's collect() (ABI 1.3), where it has one: the outputs of the calls since
  // the last collect into their tensors. Untimed; after the launches, before any output
  // is read (and before check_guards, so that collect's writes are checked too).
  void collect_outputs();
  // Every output's bytes as stored (after collect_outputs), for comparing two calls.
  output_snapshot snapshot_outputs() const;
  op_outputs download_outputs() const;
  op_gradients download_gradients() const;
  // The same for one (batch, head) only, shaped as a problem with B = H = 1: what the
  // bench's quick verify checks, without bringing whole tensors back. du (rwkv6), which
  // sums over the sequences, comes back as its row h ([1, K]). In a packed batch b is the
  // sequence: its tokens (T its length) and its state row.
  op_outputs download_head_outputs(int64_t b, int64_t h) const;
  op_gradients download_head_gradients(int64_t b, int64_t h) const;
  // What the backend's last_call_report() wrote about its last call; nullopt when it has
  // none or said nothing (GLABENCH_ERROR_UNSUPPORTED). The text is the plugin's, unchecked;
  // another failure status throws backend_call_error.
  std::optional<std::string> last_call_report();
  device_context& context() { return *ctx_; }
  // The devices the backend is given: device_ids[0] holds the tensors and the stream.
  const std::vector<int32_t>& device_ids() const { return device_ids_; }

 private:
  struct device_tensor;
  enum slot : int {
    q,
    k,
    v,
    g,
    u,
    h0,
    d_o,
    dht,
    o,
    ht,
    lse,
    dq,
    dk,
    dv,
    dg,
    du,
    dh0,
    cu_seqlens,
    num_slots
  };
  static constexpr slot kOutputSlots[] = {o, ht, lse, dq, dk, dv, dg, du, dh0};

  void upload(const op_inputs& in, bool with_cotangents);
  template <typename Args>
  void fill_inputs(Args& a) const;
  glabench_forward_args forward_args();
  glabench_backward_args backward_args();
  void prepare_backend(glabench_mode mode);
  dtype slot_dtype(slot s) const;
  DLDataType slot_dlpack(slot s) const;
  void ensure(slot s, const std::vector<int64_t>& shape);
  void upload_slot(slot s, const tensor& t);
  void upload_offsets();
  tensor download_slot(slot s) const;
  tensor download_head(slot s, int64_t b, int64_t h) const;
  const DLTensor* in(slot s) const;
  DLTensor* out(slot s);
  void check(glabench_status status, const char* call, const char* msg) const;
  void ensure_workspace(glabench_mode mode);
  void write_guards(slot s);

  const loaded_backend& backend_;
  problem problem_;
  dtype dtype_;
  dtype state_dtype_;  // of h0, ht, dh0 and dht
  bool has_h0_;
  std::vector<int32_t> device_ids_;
  glabench_problem abi_problem_{};
  std::unique_ptr<device_context> ctx_;
  std::array<std::unique_ptr<device_tensor>, num_slots> slots_;
  bool has_dht_ = false;
  bool forward_launched_ = false, backward_launched_ = false;  // since the last check_guards
  device_buffer workspace_;
};

}  // namespace glabench
