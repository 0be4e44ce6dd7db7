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
  int device = 0;
  int steps = 0;  // decisions so far
  nccl::comm comm = nullptr;
  cudaStream_t stream = nullptr;
  int* flags = nullptr;  // four ints on the device
};

rank_agreement::rank_agreement(int device) : state_(std::make_unique<state>()) {
  if (!state_->ranks.error.empty()) throw std::runtime_error(state_->ranks.error);
  state_->device = device;
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
  int previous = 0;
  check_cuda(cudaGetDevice(&previous), "cudaGetDevice");
  check_cuda(cudaSetDevice(st.device), "cudaSetDevice");
  struct restore {
    int device;
    ~restore() { cudaSetDevice(device); }
  } keep{previous};
  if (!st.comm) {
    std::string why;
    if (!nccl::library_loaded(&why))
      throw std::runtime_error("bench across processes needs NCCL: " + why);
    if (!st.stream)
      check_cuda(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    if (!st.flags)
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&st.flags), 4 * sizeof(int)), "cudaMalloc");
    nccl::comm made = nullptr;
    if (std::string e = nccl::process_communicator(st.ranks, st.device, &made); !e.empty())
      throw std::runtime_error("bench across processes: " + e);
    st.comm = made;
  }
  // The two flags, and the step as its smallest and (negated) largest over the ranks.
  ++st.steps;
  int four[4] = {two[0], two[1], st.steps, -st.steps};
  check_cuda(cudaMemcpyAsync(st.flags, four, sizeof four, cudaMemcpyHostToDevice, st.stream),
             "cudaMemcpyAsync");
  if (std::string e = nccl::all_reduce_min(st.flags, st.flags, 4, st.comm, st.stream); !e.empty())
    throw std::runtime_error("bench across processes: " + e);
  check_cuda(cudaMemcpyAsync(four, st.flags, sizeof four, cudaMemcpyDeviceToHost, st.stream),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize (agreement)");
  if (four[2] != -four[3])
    throw std::runtime_error("bench across processes: the ranks are out of step (decision " +
                             std::to_string(four[2]) + " on one, " + std::to_string(-four[3]) +
                             " on another)");
  two[0] = four[0], two[1] = four[1];
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
rank_agreement::rank_agreement(int) : state_(std::make_unique<state>()) {}
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
