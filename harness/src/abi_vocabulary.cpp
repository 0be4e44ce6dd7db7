#include "abi_vocabulary.hpp"

namespace glabench {

glabench_op to_abi(op_kind op) {
  switch (op) {
    case op_kind::gla:
      return GLABENCH_OP_GLA;
    case op_kind::rwkv6:
      return GLABENCH_OP_RWKV6;
    case op_kind::softmax_attn:
      return GLABENCH_OP_SOFTMAX_ATTN;
  }
  return GLABENCH_OP_GLA;
}

op_kind from_abi(glabench_op op) {
  switch (op) {
    case GLABENCH_OP_GLA:
      return op_kind::gla;
    case GLABENCH_OP_RWKV6:
      return op_kind::rwkv6;
    case GLABENCH_OP_SOFTMAX_ATTN:
      return op_kind::softmax_attn;
  }
  return op_kind::gla;
}

DLDataType to_dlpack(dtype d) {
  switch (d) {
    case dtype::fp64:
      return {kDLFloat, 64, 1};
    case dtype::fp32:
      return {kDLFloat, 32, 1};
    case dtype::fp16:
      return {kDLFloat, 16, 1};
    case dtype::bf16:
      return {kDLBfloat, 16, 1};
  }
  return {};
}

std::optional<dtype> from_dlpack(DLDataType t) {
  for (dtype d : kAllDtypes) {
    const DLDataType x = to_dlpack(d);
    if (x.code == t.code && x.bits == t.bits && x.lanes == t.lanes) return d;
  }
  return std::nullopt;
}

std::string_view mode_name(glabench_mode mode) {
  return mode == GLABENCH_MODE_FORWARD ? "fwd" : "bwd";
}

std::string feature_names(uint32_t features) {
  std::string out;
  for (uint32_t bit = 0; bit < 32; ++bit) {
    const uint32_t mask = 1u << bit;
    if (!(features & mask)) continue;
    out += out.empty() ? "" : ", ";
    out += mask == GLABENCH_FEATURE_VARLEN       ? "varlen"
           : mask == GLABENCH_FEATURE_STATE_FP32 ? "fp32 state"
                                                 : "bit " + std::to_string(bit);
  }
  return out;
}

std::string status_name(glabench_status s) {
  switch (s) {
    case GLABENCH_OK:
      return "ok";
    case GLABENCH_ERROR_UNSUPPORTED:
      return "unsupported";
    case GLABENCH_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case GLABENCH_ERROR_NO_DEVICE:
      return "no device";
    case GLABENCH_ERROR_RUNTIME:
      return "runtime error";
  }
  return "status " + std::to_string(static_cast<int>(s));
}

}  // namespace glabench
