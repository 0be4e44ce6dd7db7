// The backend ABI's vocabulary in the harness's terms, both ways, in one place: op codes
// (glabench_op ↔ the reference's op_kind), dtypes (DLPack's DLDataType ↔ dtype), call
// modes (glabench_mode ↔ "fwd" / "bwd"), features (their names) and status codes (their
// names in messages).
#pragma once

#include <dlpack/dlpack.h>

#include <optional>
#include <string>
#include <string_view>

#include "dtype.hpp"
#include "glabench/backend.h"
#include "glabench/reference/problem.hpp"

namespace glabench {

glabench_op to_abi(op_kind op);
op_kind from_abi(glabench_op op);

DLDataType to_dlpack(dtype d);
std::optional<dtype> from_dlpack(DLDataType d);  // nullopt for a dtype glabench lacks

// "fwd" or "bwd", as `glabench list` shows a capability.
std::string_view mode_name(glabench_mode mode);

// The GLABENCH_FEATURE_* bits by name, as `glabench list` shows them: "varlen, fp32 state"
// ("" for none; a bit this glabench does not know as "bit N").
std::string feature_names(uint32_t features);

// Human-readable status name ("unsupported", "no device", …).
std::string status_name(glabench_status s);

}  // namespace glabench
