#include "nvml_reader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA
namespace {

// The few NVML entry points used, declared here (nvml.h is not part of the toolkit
// headers we build with).
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
  nvml_api(const nvml_api&) = delete;
  nvml_api& operator=(const nvml_api&) = delete;
  bool usable() const { return init && shutdown && by_pci && clock; }
};

}  // namespace

nlohmann::json read_gpu_state(int device_id) {
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

#else

nlohmann::json read_gpu_state(int) {
  return {{"nvml", "glabench was built without CUDA"}};
}

#endif

}  // namespace glabench
