// The gla instantiation of the shared per-feature scan's dispatch
// (backends/common/parallel_scan/launch.cuh): every gla kernel variant is compiled here.
#include "launch.cuh"

namespace glabench::parallel_scan {

template cudaError_t launch_forward<recurrence::gla>(storage, const scan_args&);
template cudaError_t launch_backward<recurrence::gla>(storage, const scan_args&);

}  // namespace glabench::parallel_scan
