#include "bench_device.hpp"

#include <stdexcept>

#include "cpu_timer.hpp"
#include "cuda_timer.hpp"
#include "device_info.hpp"
#include "l2_flush.hpp"
#include "llc_flush.hpp"

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {
namespace {

class host_bench_device final : public bench_device {
 public:
  void start() override { timer_.start(); }
  double stop_ms() override { return timer_.stop_ms(); }
  void flush_caches() override { flush_.flush(); }
  void synchronize() override {}
  size_t free_bytes() const override { return host_available_bytes(); }

 private:
  cpu_timer timer_;
  llc_flush flush_;
};

#if GLABENCH_WITH_CUDA
class cuda_bench_device final : public bench_device {
 public:
  cuda_bench_device(const std::vector<int32_t>& device_ids, void* stream)
      : stream_(stream), flush_(device_ids, stream), timer_(stream) {}
  void start() override { timer_.start(); }
  double stop_ms() override { return timer_.stop_ms(); }
  void flush_caches() override { flush_.flush(); }
  void synchronize() override {
    check_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
  }
  size_t free_bytes() const override {
    size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }

 private:
  void* stream_;
  l2_flush flush_;
  cuda_timer timer_;
};
#endif

}  // namespace

namespace {

std::unique_ptr<bench_device> cuda_device_on(const std::vector<int32_t>& device_ids, void* stream) {
#if GLABENCH_WITH_CUDA
  return std::make_unique<cuda_bench_device>(device_ids, stream);
#else
  (void)device_ids, (void)stream;
  throw std::runtime_error("glabench was built without CUDA");
#endif
}

}  // namespace

std::unique_ptr<bench_device> make_cuda_bench_device(int device_id, void* stream) {
  return cuda_device_on({device_id}, stream);
}

std::unique_ptr<bench_device> make_bench_device(device_context& ctx) {
  return make_bench_device(ctx, {ctx.device().device_id});
}

std::unique_ptr<bench_device> make_bench_device(device_context& ctx,
                                                const std::vector<int32_t>& device_ids) {
  if (ctx.device().device_type != kDLCUDA) return std::make_unique<host_bench_device>();
  if (device_ids.empty() || device_ids[0] != ctx.device().device_id)
    throw std::invalid_argument("make_bench_device: device_ids[0] must be the context's device");
  return cuda_device_on(device_ids, ctx.stream());
}

}  // namespace glabench
