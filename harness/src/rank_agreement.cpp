#include "rank_agreement.hpp"

#include <stdexcept>
#include <string>

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#include "nccl_link.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA

namespace nccl = cuda_plugin::nccl;

struct rank_agreement::state {
  const nccl::process_ranks& ranks = nccl::process_knobs("GLABENCH");
  nccl::comm comm = nullptr;
  cudaStream_t stream = nullptr;
  int* flags = nullptr;  // two ints on the device
};

rank_agreement::rank_agreement() : state_(std::make_unique<state>()) {
  if (!state_->ranks.error.empty()) throw std::runtime_error(state_->ranks.error);
}
rank_agreement::~rank_agreement() {
  if (state_->flags) cudaFree(state_->flags);
  if (state_->stream) cudaStreamDestroy(state_->stream);
}

bool rank_agreement::across_processes() const {
  return state_->ranks.world > 1;
}

void rank_agreement::min_over_ranks(int two[2]) {
  state& st = *state_;
  if (!st.comm) {
    std::string why;
    if (!nccl::library_loaded(&why))
      throw std::runtime_error("bench across processes needs NCCL: " + why);
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    if (std::string e = nccl::process_communicator(st.ranks, device, &st.comm); !e.empty())
      throw std::runtime_error("bench across processes: " + e);
    check_cuda(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&st.flags), 2 * sizeof(int)), "cudaMalloc");
  }
  check_cuda(cudaMemcpyAsync(st.flags, two, 2 * sizeof(int), cudaMemcpyHostToDevice, st.stream),
             "cudaMemcpyAsync");
  if (std::string e = nccl::all_reduce_min(st.flags, st.flags, 2, st.comm, st.stream); !e.empty())
    throw std::runtime_error("bench across processes: " + e);
  check_cuda(cudaMemcpyAsync(two, st.flags, 2 * sizeof(int), cudaMemcpyDeviceToHost, st.stream),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize (agreement)");
}

bool rank_agreement::all(bool mine) {
  if (!across_processes()) return mine;
  int two[2] = {mine ? 1 : 0, 1};
  min_over_ranks(two);
  return two[0] == 1;
}

bool rank_agreement::stop(bool must, bool may) {
  if (!across_processes()) return must || may;
  int two[2] = {must ? 0 : 1, (must || may) ? 1 : 0};
  min_over_ranks(two);
  return two[0] == 0 || two[1] == 1;
}

#else  // a host-only build: one process

struct rank_agreement::state {};
rank_agreement::rank_agreement() : state_(std::make_unique<state>()) {}
rank_agreement::~rank_agreement() = default;
bool rank_agreement::across_processes() const {
  return false;
}
bool rank_agreement::all(bool mine) {
  return mine;
}
bool rank_agreement::stop(bool must, bool may) {
  return must || may;
}

#endif

}  // namespace glabench
