#include "backend_runner.hpp"

#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "abi_vocabulary.hpp"
#include "call_watch.hpp"
#include "plugin_message.hpp"

namespace glabench {

struct backend_runner::device_tensor {
  std::vector<int64_t> shape;
  device_buffer buffer;  // kGuardBytes of guard, data_bytes of data, kGuardBytes of guard
  size_t data_bytes = 0;
  DLTensor dl{};
  std::byte* front() const { return static_cast<std::byte*>(buffer.data()); }
  std::byte* data() const { return front() + kGuardBytes; }
  std::byte* tail() const { return data() + data_bytes; }
};

namespace {
constexpr size_t kMessageCapacity = 2048;
// last_call_report's buffer: room for a per-rank breakdown on a machine of many GPUs.
constexpr size_t kReportCapacity = 16384;

// Every call into a plugin: marked for the call watch (a worker's time limit), and
// noexcept, because the ABI is C: an exception thrown through it ends the process (in a
// worker: its case is recorded as crashed) instead of unwinding into the harness.
template <typename Call>
glabench_status call_plugin(Call&& call) noexcept {
  const watched_call watch;
  return call();
}

// A call that writes a message: `call` is given the buffer, which is terminated after it
// whatever the plugin wrote (plugin_message.hpp).
template <size_t Capacity, typename Call>
glabench_status call_plugin(plugin_message<Capacity>& message, Call&& call) noexcept {
  glabench_message* buffer = message.for_call();
  const glabench_status status = call_plugin([&] { return call(buffer); });
  message.terminate();
  return status;
}

// Indexed by backend_runner::slot.
constexpr const char* kSlotNames[] = {"q",   "k",   "v",  "g",  "u",   "h0",
                                      "d_o", "dht", "o",  "ht", "lse", "dq",
                                      "dk",  "dv",  "dg", "du", "dh0", "cu_seqlens"};

using guard_bytes = std::array<std::byte, backend_runner::kGuardBytes>;

// The canary: a fixed pseudo-random byte sequence (no run of equal bytes, so neither
// zeros, NaN poison nor a repeated stray value looks like it).
const guard_bytes& guard_pattern() {
  static const guard_bytes pattern = [] {
    guard_bytes a{};
    uint32_t x = 0x9E3779B9u;
    for (std::byte& b : a) {
      x = x * 1664525u + 1013904223u;
      b = std::byte(x >> 24);
    }
    return a;
  }();
  return pattern;
}

size_t changed_bytes(const guard_bytes& got) {
  size_t n = 0;
  for (size_t i = 0; i < got.size(); ++i) n += got[i] != guard_pattern()[i];
  return n;
}

// Why the backend cannot run on this machine, or "" when it can. For a CUDA backend the
// harness asks first whether there is a usable GPU at all: where there is none, that is
// the reason ("no CUDA device …"), not whatever error the backend's own CUDA runtime
// reports for it.
std::string why_unavailable(const loaded_backend& b) {
  if (b.table->device_type == kDLCUDA) {
    std::string reason;
    if (cuda_device_count(&reason) == 0) return reason;
  }
  plugin_message<kMessageCapacity> reason;
  if (call_plugin(reason, [&](glabench_message* m) { return b.table->device_available(m); }) !=
      GLABENCH_OK)
    return reason.empty() ? "its device_available() said no" : reason.text();
  return "";
}

}  // namespace

std::string availability_here(const loaded_backend& b) {
  const std::string why = why_unavailable(b);
  return why.empty() ? "available" : "unavailable: " + why;
}

backend_runner::backend_runner(const loaded_backend& backend, const problem& p, dtype d,
                               bool has_h0, bool need_backward,
                               const std::vector<int32_t>& device_ids)
    : backend_(backend),
      problem_(p),
      dtype_(d),
      state_dtype_(backend.state_dtype(d)),
      has_h0_(has_h0 && p.has_state()) {
  const glabench_backend& t = *backend_.table;
  if (device_ids.empty()) throw std::invalid_argument("backend_runner: no device given");
  check_cu_seqlens(p);  // std::invalid_argument, as the reference throws
  // Before any plugin call: a problem the backend is not offered is its table's to say.
  if (const std::string why = backend.not_offered(p); !why.empty())
    throw backend_call_error(GLABENCH_ERROR_UNSUPPORTED, why);
  const bool cuda = t.device_type == kDLCUDA;
  // A host backend has one place to run: more devices asked for is a problem it cannot
  // take (skipped, not failed); one device, whatever its number, is the host, 0.
  if (!cuda && device_ids.size() > 1)
    throw backend_call_error(GLABENCH_ERROR_UNSUPPORTED, "a host backend runs on one device; " +
                                                             std::to_string(device_ids.size()) +
                                                             " were asked for (--devices)");
  device_ids_ = cuda ? device_ids : std::vector<int32_t>{0};
  if (const std::string why = why_unavailable(backend); !why.empty())
    throw backend_call_error(GLABENCH_ERROR_NO_DEVICE, "cannot run here: " + why);
  if (cuda) {
    const int count = cuda_device_count(nullptr);
    for (const int32_t id : device_ids_)
      if (id < 0 || id >= count)
        throw backend_call_error(GLABENCH_ERROR_NO_DEVICE, "cannot run here: no CUDA device " +
                                                               std::to_string(id) + " (" +
                                                               std::to_string(count) + " present)");
  }
  ctx_ = cuda ? make_cuda_context(device_ids_[0]) : make_host_context();

  abi_problem_.struct_size = sizeof(glabench_problem);
  abi_problem_.op = to_abi(p.op);
  abi_problem_.B = p.B;
  abi_problem_.T = p.T;
  abi_problem_.H = p.H;
  abi_problem_.K = p.K;
  abi_problem_.V = p.V;
  abi_problem_.scale = p.scale;
  abi_problem_.causal = p.causal ? 1 : 0;
  abi_problem_.dtype = to_dlpack(d);
  abi_problem_.has_h0 = has_h0_ ? 1 : 0;
  abi_problem_.has_dht = 0;
  abi_problem_.num_devices = static_cast<int32_t>(device_ids_.size());
  abi_problem_.device_ids = device_ids_.data();
  abi_problem_.num_seqs = p.varlen() ? p.num_states() : 0;
  abi_problem_.state_dtype = to_dlpack(state_dtype_);
  abi_problem_.seqlens_dtype = {kDLInt, uint8_t(p.T < (int64_t(1) << 31) ? 32 : 64), 1};

  for (glabench_mode mode : {GLABENCH_MODE_FORWARD, GLABENCH_MODE_BACKWARD}) {
    if (mode == GLABENCH_MODE_BACKWARD && !need_backward) break;
    plugin_message<kMessageCapacity> reason;
    if (call_plugin(reason, [&](glabench_message* m) {
          return t.supports(&abi_problem_, mode, m);
        }) != GLABENCH_OK)
      throw backend_call_error(GLABENCH_ERROR_UNSUPPORTED,
                               backend.name() +
                                   (mode == GLABENCH_MODE_FORWARD ? " forward" : " backward") +
                                   " refuses this problem: " + reason.text());
  }
}

backend_runner::~backend_runner() {
  const glabench_backend& t = *backend_.table;
  if (GLABENCH_HAS_MEMBER(&t, glabench_backend, release) && t.release)
    call_plugin([&] {
      t.release();
      return GLABENCH_OK;
    });
}

void backend_runner::check(glabench_status status, const char* call, const char* msg) const {
  if (status != GLABENCH_OK)
    throw backend_call_error(status,
                             backend_.name() + " " + call + " failed (" + status_name(status) +
                                 "): " + (*msg ? msg : "no message"),
                             true);
}

// lse is float32 when the storage dtype is 16-bit (docs/design.md §1): the backward's
// probabilities are exp(s − lse), and a bf16 lse would put |lse|·2⁻⁹ of error in each.
// The states take the backend's state dtype (ABI 1.5).
dtype backend_runner::slot_dtype(slot s) const {
  if (s == cu_seqlens) throw std::logic_error("cu_seqlens holds offsets, not values");
  if (s == h0 || s == ht || s == dht || s == dh0) return state_dtype_;
  return s == lse && is_16_bit(dtype_) ? dtype::fp32 : dtype_;
}

DLDataType backend_runner::slot_dlpack(slot s) const {
  return s == cu_seqlens ? abi_problem_.seqlens_dtype : to_dlpack(slot_dtype(s));
}

void backend_runner::ensure(slot s, const std::vector<int64_t>& shape) {
  auto& dt = slots_[s];
  if (dt && dt->shape == shape) return;
  dt = std::make_unique<device_tensor>();
  dt->shape = shape;
  int64_t n = 1;
  for (int64_t x : shape) n *= x;
  dt->data_bytes = static_cast<size_t>(n) * (slot_dlpack(s).bits / 8);
  dt->buffer = device_buffer(*ctx_, dt->data_bytes + 2 * kGuardBytes);
  dt->dl.data = dt->data();
  dt->dl.device = ctx_->device();
  dt->dl.ndim = static_cast<int32_t>(dt->shape.size());
  dt->dl.dtype = slot_dlpack(s);
  dt->dl.shape = dt->shape.data();
  dt->dl.strides = nullptr;  // compact row-major
  dt->dl.byte_offset = 0;
  write_guards(s);
}

void backend_runner::write_guards(slot s) {
  const auto& dt = slots_[s];
  ctx_->copy_to_device(dt->front(), guard_pattern().data(), kGuardBytes);
  ctx_->copy_to_device(dt->tail(), guard_pattern().data(), kGuardBytes);
}

// A changed guard is put down to the launch that had the tensor as an output, else
// (an input) to every launch since the last check. In backward() the checks follow
// each launch, so the call named is exact; the bench checks after forward+backward.
void backend_runner::check_guards() {
  const bool fwd = forward_launched_, bwd = backward_launched_;
  forward_launched_ = backward_launched_ = false;
  std::string problems;
  guard_bytes got;
  for (int i = 0; i < num_slots; ++i) {
    const slot s = static_cast<slot>(i);
    const auto& dt = slots_[s];
    if (!dt) continue;
    bool damaged = false;
    for (const bool after : {false, true}) {
      ctx_->copy_to_host(got.data(), after ? dt->tail() : dt->front(), kGuardBytes);
      const size_t changed = changed_bytes(got);
      if (changed == 0) continue;
      damaged = true;
      const bool forward_output = s == o || s == ht || s == lse;
      const bool backward_output = s >= dq && s <= dh0;
      std::string call = fwd && bwd ? "forward or backward"
                         : fwd      ? "forward"
                         : bwd      ? "backward"
                                    : "a call";
      std::string role = "input";
      if ((forward_output && fwd) || (backward_output && bwd)) {
        call = forward_output ? "forward" : "backward";
        role = "output";
      }
      if (!problems.empty()) problems += "; ";
      problems += backend_.name() + " " + call + " wrote " +
                  (after ? "past the end of " : "before the start of ") + role + " '" +
                  kSlotNames[s] + "' (" + std::to_string(changed) + " of " +
                  std::to_string(kGuardBytes) + " guard bytes " + (after ? "after" : "before") +
                  " it changed)";
    }
    if (damaged) write_guards(s);  // a later check then reports only new damage
  }
  if (!problems.empty()) throw backend_call_error(GLABENCH_ERROR_RUNTIME, problems, true);
}

void backend_runner::upload_slot(slot s, const tensor& t) {
  ensure(s, t.shape);
  const std::vector<std::byte> bytes = pack(t, slot_dtype(s));
  ctx_->copy_to_device(slots_[s]->data(), bytes.data(), bytes.size());
}

tensor backend_runner::download_slot(slot s) const {
  const auto& dt = slots_[s];
  if (!dt) return {};
  std::vector<std::byte> bytes(dt->data_bytes);
  ctx_->copy_to_host(bytes.data(), dt->data(), bytes.size());
  return unpack(bytes.data(), dt->shape, slot_dtype(s));
}

// Token tensors are [B,T,H,X]: one head is T rows of X values, H·X apart. States
// [B,H,K,V] and lse [B,H,T] hold a head contiguously. In a packed batch (B 1) sequence b
// is rows [cu_seqlens[b], cu_seqlens[b+1]) of the tokens and of lse, and row b of the
// states [N,H,K,V].
tensor backend_runner::download_head(slot s, int64_t b, int64_t h) const {
  const auto& dt = slots_[s];
  if (!dt) return {};
  const size_t eb = dtype_bytes(slot_dtype(s));
  const std::vector<int64_t>& shape = dt->shape;
  const std::byte* base = dt->data();
  if (s == u || s == du) throw std::logic_error("u and du are per head already, not per (b, h)");
  const token_span seq = sequence_tokens(problem_, b);
  const int64_t row = seq.row, t0 = seq.first, tokens = seq.count;  // of the tokens and lse
  const bool token_tensor = s != ht && s != h0 && s != dht && s != dh0 && s != lse;
  std::vector<int64_t> head_shape = shape;
  std::vector<std::byte> bytes;
  if (token_tensor) {
    const int64_t T = shape[1], H = shape[2], X = shape[3];
    head_shape = {1, tokens, 1, X};
    bytes.resize(size_t(tokens * X) * eb);
    ctx_->copy_rows_to_host(bytes.data(), base + size_t(((row * T + t0) * H + h) * X) * eb,
                            size_t(X) * eb, size_t(tokens), size_t(H * X) * eb);
  } else if (s == lse) {
    const int64_t H = shape[1], T = shape[2];
    head_shape = {1, 1, tokens};
    bytes.resize(size_t(tokens) * eb);
    ctx_->copy_to_host(bytes.data(), base + size_t((row * H + h) * T + t0) * eb, bytes.size());
  } else {
    const int64_t H = shape[1];
    head_shape[0] = head_shape[1] = 1;
    int64_t per_head = 1;
    for (size_t i = 2; i < shape.size(); ++i) per_head *= shape[i];
    bytes.resize(size_t(per_head) * eb);
    ctx_->copy_to_host(bytes.data(), base + size_t((b * H + h) * per_head) * eb, bytes.size());
  }
  return unpack(bytes.data(), head_shape, slot_dtype(s));
}

const DLTensor* backend_runner::in(slot s) const {
  return slots_[s] ? &slots_[s]->dl : nullptr;
}
DLTensor* backend_runner::out(slot s) {
  return slots_[s] ? &slots_[s]->dl : nullptr;
}

void backend_runner::upload(const op_inputs& x, bool with_cotangents) {
  const problem& p = problem_;
  upload_slot(q, x.q);
  upload_slot(k, x.k);
  upload_slot(v, x.v);
  if (p.has_gate()) upload_slot(g, x.g);
  if (p.has_bonus()) upload_slot(u, x.u);
  if (has_h0_) upload_slot(h0, *x.h0);
  const bool with_d_o = with_cotangents && x.d_o.has_value();
  if (with_d_o) upload_slot(d_o, *x.d_o);
  has_dht_ = with_d_o && p.has_state() && x.dht.has_value();
  if (has_dht_) upload_slot(dht, *x.dht);
  abi_problem_.has_dht = has_dht_ ? 1 : 0;
  if (p.varlen()) upload_offsets();

  ensure(o, p.v_shape());
  if (p.has_state()) ensure(ht, p.state_shape());
  if (p.op == op_kind::softmax_attn) ensure(lse, p.lse_shape());
  if (with_d_o) {
    ensure(dq, p.qk_shape());
    ensure(dk, p.qk_shape());
    ensure(dv, p.v_shape());
    if (p.has_gate()) ensure(dg, p.qk_shape());
    if (p.has_bonus()) ensure(du, p.u_shape());
    if (has_h0_) ensure(dh0, p.state_shape());
  }
}

// The offsets in the seqlens dtype (int32 below T = 2^31).
void backend_runner::upload_offsets() {
  const std::vector<int64_t>& offsets = problem_.cu_seqlens;
  ensure(cu_seqlens, {int64_t(offsets.size())});
  std::vector<std::byte> bytes(slots_[cu_seqlens]->data_bytes);
  const size_t width = bytes.size() / offsets.size();
  for (size_t i = 0; i < offsets.size(); ++i) {
    const int32_t narrow = int32_t(offsets[i]);
    std::memcpy(
        bytes.data() + i * width,
        width == 4 ? static_cast<const void*>(&narrow) : static_cast<const void*>(&offsets[i]),
        width);
  }
  ctx_->copy_to_device(slots_[cu_seqlens]->data(), bytes.data(), bytes.size());
}

// All-ones bytes: NaN in fp64, fp32, fp16 and bf16 alike.
void backend_runner::poison_output_data() {
  for (slot s : kOutputSlots)
    if (slots_[s]) ctx_->fill(slots_[s]->data(), 0xFF, slots_[s]->data_bytes);
}

void backend_runner::poison_outputs() {
  poison_output_data();
  for (slot s : kOutputSlots)
    if (slots_[s]) write_guards(s);
  ctx_->synchronize();
}

output_snapshot backend_runner::snapshot_outputs() const {
  output_snapshot snap;
  for (slot s : kOutputSlots) {
    const auto& dt = slots_[s];
    if (!dt) continue;
    output_snapshot::entry e{kSlotNames[s], slot_dtype(s), dt->shape,
                             std::vector<std::byte>(dt->data_bytes)};
    ctx_->copy_to_host(e.bytes.data(), dt->data(), dt->data_bytes);
    snap.tensors.push_back(std::move(e));
  }
  return snap;
}

void backend_runner::ensure_workspace(glabench_mode mode) {
  plugin_message<kMessageCapacity> error;
  size_t bytes = 0;
  const glabench_status status = call_plugin(error, [&](glabench_message* m) {
    return backend_.table->workspace_size(&abi_problem_, mode, &bytes, m);
  });
  check(status, "workspace_size", error.c_str());
  if (bytes > workspace_.bytes()) workspace_ = device_buffer(*ctx_, bytes);
}

// The members forward and backward arguments share: the inputs, workspace and stream.
template <typename Args>
void backend_runner::fill_inputs(Args& a) const {
  a.struct_size = sizeof a;
  a.q = in(q);
  a.k = in(k);
  a.v = in(v);
  a.g = in(g);
  a.u = in(u);
  a.h0 = has_h0_ ? in(h0) : nullptr;
  a.cu_seqlens = in(cu_seqlens);  // NULL unless a packed batch
  a.workspace = workspace_.data();
  a.workspace_bytes = workspace_.bytes();
  a.stream = ctx_->stream();
}

glabench_forward_args backend_runner::forward_args() {
  glabench_forward_args a{};
  fill_inputs(a);
  a.o = out(o);
  a.ht = out(ht);
  a.lse = out(lse);
  return a;
}

glabench_backward_args backend_runner::backward_args() {
  glabench_backward_args a{};
  fill_inputs(a);
  a.o = in(o);
  a.lse = in(lse);
  a.d_o = in(d_o);
  a.dht = has_dht_ ? in(dht) : nullptr;
  a.dq = out(dq);
  a.dk = out(dk);
  a.dv = out(dv);
  a.dg = out(dg);
  a.du = out(du);
  a.dh0 = has_h0_ ? out(dh0) : nullptr;
  return a;
}

// The backend's own untimed set-up (ABI 1.2), on the tensors the launches will pass.
void backend_runner::prepare_backend(glabench_mode mode) {
  const glabench_backend& t = *backend_.table;
  if (!GLABENCH_HAS_MEMBER(&t, glabench_backend, prepare) || !t.prepare) return;
  const glabench_forward_args fwd = forward_args();
  std::optional<glabench_backward_args> bwd;
  if (mode == GLABENCH_MODE_BACKWARD) bwd = backward_args();
  plugin_message<kMessageCapacity> error;
  const glabench_status status = call_plugin(error, [&](glabench_message* m) {
    return t.prepare(&abi_problem_, mode, &fwd, bwd ? &*bwd : nullptr, m);
  });
  check(status, "prepare", error.c_str());
}

std::optional<std::string> backend_runner::last_call_report() {
  const glabench_backend& t = *backend_.table;
  if (!GLABENCH_HAS_MEMBER(&t, glabench_backend, last_call_report) || !t.last_call_report)
    return std::nullopt;
  plugin_message<kReportCapacity> json;
  const glabench_status status =
      call_plugin(json, [&](glabench_message* m) { return t.last_call_report(m); });
  if (status == GLABENCH_ERROR_UNSUPPORTED) return std::nullopt;
  check(status, "last_call_report", json.c_str());
  return json.text();
}

void backend_runner::collect_outputs() {
  const glabench_backend& t = *backend_.table;
  if (!GLABENCH_HAS_MEMBER(&t, glabench_backend, collect) || !t.collect) return;
  plugin_message<kMessageCapacity> error;
  const glabench_status status =
      call_plugin(error, [&](glabench_message* m) { return t.collect(m); });
  check(status, "collect", error.c_str());
}

void backend_runner::launch_forward() {
  const glabench_forward_args a = forward_args();
  plugin_message<kMessageCapacity> error;
  forward_launched_ = true;
  const glabench_status status = call_plugin(
      error, [&](glabench_message* m) { return backend_.table->forward(&abi_problem_, &a, m); });
  check(status, "forward", error.c_str());
}

void backend_runner::launch_backward() {
  const glabench_backward_args a = backward_args();
  if (!backend_.table->backward)
    check(GLABENCH_ERROR_UNSUPPORTED, "backward", "the backend has no backward");
  plugin_message<kMessageCapacity> error;
  backward_launched_ = true;
  const glabench_status status = call_plugin(
      error, [&](glabench_message* m) { return backend_.table->backward(&abi_problem_, &a, m); });
  check(status, "backward", error.c_str());
}

op_outputs backend_runner::download_outputs() const {
  return {download_slot(o), download_slot(ht), download_slot(lse)};
}

op_gradients backend_runner::download_gradients() const {
  op_gradients grads{download_slot(dq), download_slot(dk), download_slot(dv),
                     download_slot(dg), download_slot(du), {}};
  if (has_h0_) grads.dh0 = download_slot(dh0);
  return grads;
}

op_outputs backend_runner::download_head_outputs(int64_t b, int64_t h) const {
  return {download_head(o, b, h), download_head(ht, b, h), download_head(lse, b, h)};
}

op_gradients backend_runner::download_head_gradients(int64_t b, int64_t h) const {
  op_gradients grads{download_head(dq, b, h),
                     download_head(dk, b, h),
                     download_head(dv, b, h),
                     download_head(dg, b, h),
                     {},
                     {}};
  if (has_h0_) grads.dh0 = download_head(dh0, b, h);
  // du [H,K] sums over the sequences: row h, what the quick verify checks against the
  // reference's summed over them.
  if (problem_.has_bonus() && slots_[du]) {
    const tensor all = download_slot(du);
    const int64_t K = all.shape[1];
    grads.du = tensor({1, K});
    std::copy_n(all.ptr() + h * K, K, grads.du.ptr());
  }
  return grads;
}

void backend_runner::prepare(const op_inputs& x, bool with_cotangents) {
  upload(x, with_cotangents);
  const bool backward = with_cotangents && x.d_o;
  ensure_workspace(GLABENCH_MODE_FORWARD);
  if (backward) ensure_workspace(GLABENCH_MODE_BACKWARD);
  // Last: the workspace the launches pass is final only now.
  prepare_backend(backward ? GLABENCH_MODE_BACKWARD : GLABENCH_MODE_FORWARD);
}

op_outputs backend_runner::forward(const op_inputs& x) {
  prepare(x, false);
  poison_outputs();
  launch_forward();
  ctx_->synchronize();
  collect_outputs();
  check_guards();
  return download_outputs();
}

op_gradients backend_runner::backward(const op_inputs& x) {
  if (!x.d_o) throw std::invalid_argument("backward needs the cotangent d_o");
  prepare(x, true);
  poison_outputs();
  launch_forward();
  ctx_->synchronize();
  collect_outputs();  // the backward is given the forward's o and lse
  check_guards();
  launch_backward();
  ctx_->synchronize();
  collect_outputs();
  check_guards();
  return download_gradients();
}

}  // namespace glabench
