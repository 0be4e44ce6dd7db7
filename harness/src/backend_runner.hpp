// Drives one backend on one problem at one storage dtype through the plugin ABI: puts
// the fp64 host inputs into the backend's memory in its dtype, poisons every output
// with NaN before each call (an unwritten element then fails verification), calls
// forward / backward with the harness's workspace and stream, and brings the results
// back as fp64 host tensors.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "backend_loader.hpp"
#include "device_context.hpp"
#include "dtype.hpp"
#include "glabench/reference/problem.hpp"

namespace glabench {

class backend_call_error : public std::runtime_error {
 public:
  backend_call_error(glabench_status status, const std::string& what)
      : std::runtime_error(what), status_(status) {}
  glabench_status status() const { return status_; }

 private:
  glabench_status status_;
};

class backend_runner {
 public:
  // Throws backend_call_error: GLABENCH_ERROR_NO_DEVICE when the backend cannot run on
  // this machine, GLABENCH_ERROR_UNSUPPORTED (with the backend's reason) when it
  // refuses the problem in the given mode.
  backend_runner(const loaded_backend& backend, const problem& p, dtype d, bool has_h0,
                 bool need_backward);
  backend_runner(const backend_runner&) = delete;
  backend_runner& operator=(const backend_runner&) = delete;
  ~backend_runner();

  // Upload, poison, call, download. backward() runs forward first (it passes the
  // forward's o and lse to the backend) and reads in.d_o and in.dht.
  op_outputs forward(const op_inputs& in);
  op_gradients backward(const op_inputs& in);

  // The same in pieces, for timing: prepare() uploads the inputs (the cotangents only
  // when asked) and allocates the outputs and workspaces once; launches touch nothing
  // else (no allocation, no poisoning, no copies).
  void prepare(const op_inputs& in, bool with_cotangents);
  void poison_outputs();
  void launch_forward();
  void launch_backward();
  op_outputs download_outputs() const;
  op_gradients download_gradients() const;
  // The same for one (batch, head) only, shaped as a problem with B = H = 1: what the
  // bench's quick verify checks, without bringing whole tensors back. du (rwkv6), which
  // sums over the batch, is left empty.
  op_outputs download_head_outputs(int64_t b, int64_t h) const;
  op_gradients download_head_gradients(int64_t b, int64_t h) const;
  device_context& context() { return *ctx_; }

 private:
  struct device_tensor;
  enum slot : int { q, k, v, g, u, h0, d_o, dht, o, ht, lse, dq, dk, dv, dg, du, dh0, num_slots };

  void upload(const op_inputs& in, bool with_cotangents);
  template <typename Args>
  void fill_inputs(Args& a) const;
  void ensure(slot s, const std::vector<int64_t>& shape);
  void upload_slot(slot s, const tensor& t);
  tensor download_slot(slot s) const;
  tensor download_head(slot s, int64_t b, int64_t h) const;
  const DLTensor* in(slot s) const;
  DLTensor* out(slot s);
  void check(glabench_status status, const char* call, const char* msg) const;
  void ensure_workspace(glabench_mode mode);

  const loaded_backend& backend_;
  problem problem_;
  dtype dtype_;
  bool has_h0_;
  std::vector<int32_t> device_ids_{0};
  glabench_problem abi_problem_{};
  std::unique_ptr<device_context> ctx_;
  std::array<std::unique_ptr<device_tensor>, num_slots> slots_;
  bool has_dht_ = false;
  device_buffer workspace_;
};

}  // namespace glabench
