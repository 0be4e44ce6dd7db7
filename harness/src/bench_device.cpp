#include "bench_device.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "statistics.hpp"

#if GLABENCH_WITH_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {
namespace {

// The first line of a file that starts with `key`, after the key ("" if none).
std::string find_line(const char* path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      std::string rest = line.substr(key.size());
      const size_t start = rest.find_first_not_of(" \t:");
      return start == std::string::npos ? "" : rest.substr(start);
    }
  return "";
}

}  // namespace

size_t host_available_bytes() {
  const std::string kb = find_line("/proc/meminfo", "MemAvailable");
  return kb.empty() ? size_t(-1) : size_t(std::stoull(kb)) * 1024;
}

namespace {

class host_bench_device final : public bench_device {
 public:
  host_bench_device() {
    // Twice the last-level cache, at most 128 MiB (virtual machines report the whole
    // host socket's cache).
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = 32L << 20;
    flush_.resize(std::min(2 * size_t(llc), size_t(128) << 20));
  }
  void start() override { start_ = std::chrono::steady_clock::now(); }
  double stop_ms() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  void flush_caches() override {
    std::memset(flush_.data(), ++fill_, flush_.size());
    sink_ = sink_ + flush_[fill_ % flush_.size()];  // the writes are observed
  }
  size_t free_bytes() const override { return host_available_bytes(); }

 private:
  std::vector<unsigned char> flush_;
  unsigned char fill_ = 0;
  volatile unsigned sink_ = 0;
  std::chrono::steady_clock::time_point start_;
};

double median_of(std::vector<double> xs) {
  return quantile(std::move(xs), 0.5);
}

}  // namespace

nlohmann::json host_description() {
  return {{"host_cpu", find_line("/proc/cpuinfo", "model name")},
          {"host_cpus", std::thread::hardware_concurrency()}};
}

measured_peaks measure_host_peaks() {
  measured_peaks peaks;
  const size_t bytes = 256u << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::vector<double> ms;
  for (int i = 0; i < 6; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    std::swap(a, b);
  }
  peaks.copy_gbps = 2.0 * double(bytes) / (median_of(ms) * 1e6);
  peaks.notes =
      "host: single-threaded memcpy of 256 MiB, median of 6, read+write bytes; "
      "no GEMM peak on the host (no BLAS)";
  return peaks;
}

#if GLABENCH_WITH_CUDA
namespace {

class cuda_bench_device final : public bench_device {
 public:
  explicit cuda_bench_device(device_context& ctx)
      : stream_(static_cast<cudaStream_t>(ctx.stream())) {
    int device = 0, l2 = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 cache size");
    flush_ = device_buffer(ctx, size_t(std::max(l2, 1 << 20)));
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~cuda_bench_device() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { check_cuda(cudaEventRecord(start_, stream_), "cudaEventRecord"); }
  double stop_ms() override {
    check_cuda(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }
  void flush_caches() override {
    check_cuda(cudaMemsetAsync(flush_.data(), ++fill_, flush_.bytes(), stream_), "L2 flush memset");
  }
  size_t free_bytes() const override {
    size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }

 private:
  cudaStream_t stream_;
  device_buffer flush_;
  unsigned char fill_ = 0;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Times `work` on `stream`: 2 warm-ups, then the median of `reps` in milliseconds.
template <typename Work>
double time_on_stream(cudaStream_t stream, int reps, Work work) {
  cudaEvent_t a, b;
  check_cuda(cudaEventCreate(&a), "cudaEventCreate");
  check_cuda(cudaEventCreate(&b), "cudaEventCreate");
  std::vector<double> ms;
  for (int i = 0; i < reps + 2; ++i) {
    check_cuda(cudaEventRecord(a, stream), "cudaEventRecord");
    work();
    check_cuda(cudaEventRecord(b, stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(b), "cudaEventSynchronize");
    float t = 0;
    check_cuda(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    if (i >= 2) ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median_of(ms);
}

// cuBLAS, opened at run time so that glabench neither links nor ships it.
struct cublas_api {
  void* lib = nullptr;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  using gemm_ex = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                     int, const void*, const void*, cudaDataType, int, const void*,
                                     cudaDataType, int, const void*, void*, cudaDataType, int,
                                     cublasComputeType_t, cublasGemmAlgo_t);
  gemm_ex gemm = nullptr;
  std::string error;

  cublas_api() {
    std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* dir = std::getenv(env))
        names.push_back(std::string(dir) + "/lib64/libcublas.so");
    names.push_back("/usr/local/cuda/lib64/libcublas.so");
    for (const auto& n : names)
      if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      error = "cuBLAS not found (tried libcublas.so.13, .12, CUDA_HOME, /usr/local/cuda)";
      return;
    }
    create = reinterpret_cast<decltype(create)>(dlsym(lib, "cublasCreate_v2"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(lib, "cublasDestroy_v2"));
    set_stream = reinterpret_cast<decltype(set_stream)>(dlsym(lib, "cublasSetStream_v2"));
    gemm = reinterpret_cast<decltype(gemm)>(dlsym(lib, "cublasGemmEx"));
    if (!create || !destroy || !set_stream || !gemm) error = "cuBLAS lacks cublasGemmEx et al.";
  }
  ~cublas_api() {
    if (lib) dlclose(lib);
  }
};

// The few NVML entry points used, declared here (nvml.h is not part of the toolkit
// headers we build with); the library is the driver's libnvidia-ml.so.1.
struct nvml_api {
  using device_t = struct nvml_device_st*;
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, device_t*) = nullptr;
  int (*clock)(device_t, int, unsigned*) = nullptr;
  int (*temperature)(device_t, int, unsigned*) = nullptr;
  int (*power)(device_t, unsigned*) = nullptr;
  int (*reasons)(device_t, unsigned long long*) = nullptr;

  nvml_api() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    init = reinterpret_cast<decltype(init)>(dlsym(lib, "nvmlInit_v2"));
    shutdown = reinterpret_cast<decltype(shutdown)>(dlsym(lib, "nvmlShutdown"));
    by_pci = reinterpret_cast<decltype(by_pci)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<decltype(clock)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    temperature = reinterpret_cast<decltype(temperature)>(dlsym(lib, "nvmlDeviceGetTemperature"));
    power = reinterpret_cast<decltype(power)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    reasons = reinterpret_cast<decltype(reasons)>(
        dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  }
  ~nvml_api() {
    if (lib) dlclose(lib);
  }
  bool usable() const { return init && shutdown && by_pci && clock; }
};

struct gemm_kind {
  const char* name;
  cudaDataType_t type;
  cublasComputeType_t compute;
  size_t bytes;
};
constexpr gemm_kind kGemmKinds[] = {{"fp64", CUDA_R_64F, CUBLAS_COMPUTE_64F, 8},
                                    {"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, 4},
                                    {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2},
                                    {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2}};

// TFLOP/s of an n×n×n GEMM (n = 8192) in one dtype, median of 5 after 2 warm-ups.
double gemm_tflops(const cublas_api& api, cublasHandle_t handle, device_context& ctx,
                   const gemm_kind& kind) {
  const int n = 8192;
  const size_t bytes = size_t(n) * n * kind.bytes;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  device_buffer a(ctx, bytes), b(ctx, bytes), c(ctx, bytes);
  // 0x3f bytes: a finite, non-zero value in every one of these dtypes, small enough
  // that an n-long dot product stays finite in fp16.
  check_cuda(cudaMemsetAsync(a.data(), 0x3f, bytes, stream), "cudaMemset");
  check_cuda(cudaMemsetAsync(b.data(), 0x3f, bytes, stream), "cudaMemset");
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;
  const bool f64 = kind.compute == CUBLAS_COMPUTE_64F;
  const double ms = time_on_stream(stream, 5, [&] {
    const cublasStatus_t status =
        api.gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
                 f64 ? static_cast<const void*>(&one) : &onef, a.data(), kind.type, n, b.data(),
                 kind.type, n, f64 ? static_cast<const void*>(&zero) : &zerof, c.data(), kind.type,
                 n, kind.compute, CUBLAS_GEMM_DEFAULT);
    if (status != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasGemmEx failed with status " + std::to_string(status));
  });
  return 2.0 * double(n) * n * n / (ms * 1e9);
}

}  // namespace

nlohmann::json gpu_state(int device_id) {
  nvml_api nvml;
  if (!nvml.usable()) return {{"nvml", "libnvidia-ml.so.1 not found or incomplete"}};
  char pci[64] = "";
  check_cuda(cudaDeviceGetPCIBusId(pci, sizeof pci, device_id), "cudaDeviceGetPCIBusId");
  if (nvml.init() != 0) return {{"nvml", "nvmlInit failed"}};
  nlohmann::json state = nlohmann::json::object();
  nvml_api::device_t dev = nullptr;
  if (nvml.by_pci(pci, &dev) == 0) {
    unsigned value = 0;
    constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;  // nvml.h's enums
    if (nvml.clock(dev, kClockSm, &value) == 0) state["sm_clock_mhz"] = value;
    if (nvml.clock(dev, kClockMem, &value) == 0) state["memory_clock_mhz"] = value;
    if (nvml.temperature && nvml.temperature(dev, kTemperatureGpu, &value) == 0)
      state["temperature_c"] = value;
    if (nvml.power && nvml.power(dev, &value) == 0) state["power_w"] = value / 1000.0;
    unsigned long long mask = 0;
    if (nvml.reasons && nvml.reasons(dev, &mask) == 0)
      state["clock_event_reasons"] = fmt::format("{:#x}", mask);
  } else {
    state["nvml"] = std::string("no NVML device for PCI bus ") + pci;
  }
  nvml.shutdown();
  return state;
}

std::unique_ptr<bench_device> make_bench_device(device_context& ctx) {
  if (ctx.device().device_type == kDLCUDA) return std::make_unique<cuda_bench_device>(ctx);
  return std::make_unique<host_bench_device>();
}

nlohmann::json cuda_description(int device_id) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device_id), "cudaGetDeviceProperties");
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    check_cuda(cudaDeviceGetAttribute(&v, a, device_id), "cudaDeviceGetAttribute");
    return v;
  };
  int driver = 0, runtime = 0;
  check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  // "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build …" → 580.159.04
  std::string driver_text = find_line("/proc/driver/nvidia/version", "NVRM version");
  std::smatch version;
  if (std::regex_search(driver_text, version, std::regex(R"(\b\d+\.\d+(\.\d+)?\b)")))
    driver_text = version.str();
  return {{"device", prop.name},
          {"compute_capability", fmt::format("{}.{}", prop.major, prop.minor)},
          {"sm_count", prop.multiProcessorCount},
          {"sm_clock_max_mhz", attr(cudaDevAttrClockRate) / 1000},
          {"memory_clock_max_mhz", attr(cudaDevAttrMemoryClockRate) / 1000},
          {"l2_bytes", prop.l2CacheSize},
          {"memory_bytes", prop.totalGlobalMem},
          {"driver_api_version", fmt::format("{}.{}", driver / 1000, (driver % 1000) / 10)},
          {"driver", driver_text},
          {"cuda_runtime_version", fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10)}};
}

measured_peaks measure_cuda_peaks(int device_id) {
  measured_peaks peaks;
  auto ctx = make_cuda_context(device_id);
  auto stream = static_cast<cudaStream_t>(ctx->stream());
  {
    const size_t bytes = size_t(1) << 30;
    device_buffer a(*ctx, bytes), b(*ctx, bytes);
    check_cuda(cudaMemsetAsync(a.data(), 0x3f, bytes, stream), "cudaMemset");
    const double ms = time_on_stream(stream, 10, [&] {
      check_cuda(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpyAsync D2D");
    });
    peaks.copy_gbps = 2.0 * double(bytes) / (ms * 1e6);
  }
  peaks.notes =
      "copy: cudaMemcpyAsync device-to-device of 1 GiB, median of 10, read+write "
      "bytes; gemm: cublasGemmEx 8192³ (bf16/fp16 in, fp32 compute), median of 5";
  cublas_api api;
  if (!api.error.empty()) {
    peaks.notes += "; no GEMM peak: " + api.error;
    return peaks;
  }
  cublasHandle_t handle = nullptr;
  if (api.create(&handle) != CUBLAS_STATUS_SUCCESS) {
    peaks.notes += "; no GEMM peak: cublasCreate failed";
    return peaks;
  }
  api.set_stream(handle, stream);
  for (const gemm_kind& kind : kGemmKinds) {
    try {
      peaks.gemm_tflops[kind.name] = gemm_tflops(api, handle, *ctx, kind);
    } catch (const std::exception& e) {
      peaks.notes += fmt::format("; no {} GEMM peak: {}", kind.name, e.what());
    }
  }
  api.destroy(handle);
  return peaks;
}

#else

std::unique_ptr<bench_device> make_bench_device(device_context&) {
  return std::make_unique<host_bench_device>();
}
nlohmann::json cuda_description(int) {
  return nlohmann::json::object();
}
nlohmann::json gpu_state(int) {
  return {{"nvml", "glabench was built without CUDA"}};
}
measured_peaks measure_cuda_peaks(int) {
  throw std::runtime_error("glabench was built without CUDA");
}

#endif

}  // namespace glabench
