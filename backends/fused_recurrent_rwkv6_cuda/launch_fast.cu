// Fast mode: the rwkv6 instantiation of the shared per-feature scan's dispatch
// (backends/common/parallel_scan/launch.cuh): every rwkv6 kernel variant is compiled here.
#include "launch.cuh"

namespace glabench::parallel_scan {

template cudaError_t launch_forward<recurrence::rwkv6>(storage, const scan_args&);
template cudaError_t launch_backward<recurrence::rwkv6>(storage, const scan_args&);

}  // namespace glabench::parallel_scan
