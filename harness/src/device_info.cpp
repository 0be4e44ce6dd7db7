#include "device_info.hpp"

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "device_context.hpp"

#if GLABENCH_WITH_CUDA
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

nlohmann::json host_description() {
  return {{"host_cpu", find_line("/proc/cpuinfo", "model name")},
          {"host_cpus", std::thread::hardware_concurrency()}};
}

#if GLABENCH_WITH_CUDA

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

#else

nlohmann::json cuda_description(int) {
  return nlohmann::json::object();
}

#endif

run_device describe_run_device(bool any_cuda, int device_id) {
  run_device d;
  d.context = host_description();
  std::string no_gpu;
  d.on_gpu = any_cuda && cuda_device_count(&no_gpu) > 0;
  if (d.on_gpu) {
    d.context.update(cuda_description(device_id));
  } else {
    d.context["device"] = "cpu: " + d.context.value("host_cpu", std::string("?"));
    if (any_cuda) d.context["cuda_unavailable"] = no_gpu;
  }
  return d;
}

}  // namespace glabench
