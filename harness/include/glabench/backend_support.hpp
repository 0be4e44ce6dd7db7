// Optional C++ conveniences for writing a backend against backend.h: message
// writing, typed tensor access, and a guard that turns exceptions into status codes
// so none crosses the C boundary. Header-only; a backend in C needs none of it.
#pragma once

#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "glabench/backend.h"

namespace glabench::backend_support {

inline constexpr DLDataType kFloat64{kDLFloat, 64, 1};
inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat16{kDLFloat, 16, 1};
inline constexpr DLDataType kBFloat16{kDLBfloat, 16, 1};

inline bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

inline void write_message(glabench_message* msg, std::string_view text) {
  if (!msg || !msg->text || msg->capacity == 0) return;
  const size_t n = text.size() < msg->capacity - 1 ? text.size() : msg->capacity - 1;
  std::memcpy(msg->text, text.data(), n);
  msg->text[n] = '\0';
}

inline glabench_status fail(glabench_message* msg, glabench_status status, std::string_view text) {
  write_message(msg, text);
  return status;
}

// The element pointer of a DLTensor (data + byte_offset); nullptr for a null tensor.
template <typename T>
T* data_of(const DLTensor* t) {
  return t ? reinterpret_cast<T*>(static_cast<char*>(t->data) + t->byte_offset) : nullptr;
}

// Is (op, dtype, mode) in the backend's capability table?
inline bool has_capability(const glabench_backend& b, glabench_op op, DLDataType dtype,
                           glabench_mode mode) {
  for (size_t i = 0; i < b.num_capabilities; ++i) {
    const glabench_capability& c = b.capabilities[i];
    if (c.op == op && c.mode == mode && same_dtype(c.dtype, dtype)) return true;
  }
  return false;
}

// ABI 1.5's problem fields, read safely from a harness of any minor version.
// The sequences of a packed batch (num_seqs), or 0 for B sequences of T tokens.
inline int64_t packed_sequences(const glabench_problem* p) {
  return GLABENCH_HAS_MEMBER(p, glabench_problem, num_seqs) ? p->num_seqs : 0;
}
// The dtype of h0, ht, dh0 and dht: state_dtype, or the storage dtype before 1.5.
inline DLDataType state_dtype_of(const glabench_problem* p) {
  return GLABENCH_HAS_MEMBER(p, glabench_problem, state_dtype) ? p->state_dtype : p->dtype;
}
// Whether h0, ht, dh0 and dht come in float32 at a 16-bit storage dtype (a backend that
// declares GLABENCH_FEATURE_STATE_FP32).
inline bool states_in_fp32(const glabench_problem* p) {
  const DLDataType s = state_dtype_of(p);
  return p->dtype.bits == 16 && s.code == kDLFloat && s.bits == 32;
}
// The cu_seqlens of forward or backward arguments: NULL before 1.5.
template <typename Args>
const DLTensor* cu_seqlens_of(const Args& a) {
  return GLABENCH_HAS_MEMBER(&a, Args, cu_seqlens) ? a.cu_seqlens : nullptr;
}

// The checks every forward / backward starts with: the backend's own supports(), and
// a workspace at least as large as its workspace_size() asks for.
inline glabench_status check_call(const glabench_backend& b, const glabench_problem* p,
                                  glabench_mode mode, size_t workspace_bytes,
                                  glabench_message* error) {
  if (glabench_status s = b.supports(p, mode, error)) return s;
  size_t needed = 0;
  if (glabench_status s = b.workspace_size(p, mode, &needed, error)) return s;
  if (workspace_bytes < needed)
    return fail(error, GLABENCH_ERROR_INVALID_ARGUMENT,
                "workspace of " + std::to_string(workspace_bytes) + " bytes, need " +
                    std::to_string(needed));
  return GLABENCH_OK;
}

// Runs fn() -> glabench_status; any exception becomes GLABENCH_ERROR_RUNTIME with its
// message.
template <typename Fn>
glabench_status guarded(glabench_message* msg, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return fail(msg, GLABENCH_ERROR_RUNTIME, "out of host memory");
  } catch (const std::exception& e) {
    return fail(msg, GLABENCH_ERROR_RUNTIME, e.what());
  } catch (...) {
    return fail(msg, GLABENCH_ERROR_RUNTIME, "unknown exception");
  }
}

}  // namespace glabench::backend_support
