// The GPU's GEMM rate per dtype, measured with cuBLAS: the denominators of the flop
// fractions `glabench bench` reports. cuBLAS is opened at run time (libcublas.so.13,
// .12, then under CUDA_HOME, CUDA_PATH and /usr/local/cuda), so that glabench neither
// links nor ships it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "device_context.hpp"

namespace glabench {

// TFLOP/s of an 8192³ cublasGemmEx per dtype (fp64; fp32 with fp32 compute, no TF32;
// fp16 and bf16 with fp32 compute), each the median of 5 after 2 warm-ups, on the
// context's stream: {"fp64": …, "fp32": …, "fp16": …, "bf16": …}. A dtype that cannot be
// measured is left out and `notes` gets "; no <dtype> GEMM peak: <why>" (all of them
// when cuBLAS cannot be opened).
nlohmann::json measure_gemm_tflops(device_context& ctx, std::string& notes);

}  // namespace glabench
