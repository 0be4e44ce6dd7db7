// The peak rates a run's throughput is measured against, once per run on the device
// the backends ran on: copy bandwidth (memcpy on the host; device-to-device
// cudaMemcpy on a GPU) and, on a GPU, cuBLAS's GEMM rate per dtype (cublas_peaks).
#pragma once

#include "bench_results.hpp"

namespace glabench {

measured_peaks measure_host_peaks();
// Throws std::runtime_error when glabench was built without CUDA.
measured_peaks measure_cuda_peaks(int device_id);

}  // namespace glabench
