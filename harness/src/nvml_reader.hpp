// The GPU's state now, read through NVML (the driver's libnvidia-ml.so.1, opened at run
// time so that glabench neither links nor ships it): SM and memory clocks, temperature,
// power and the clock-event (throttle) reasons bitmask (nvml.h's nvmlClocksEventReason*:
// 0x1 idle, 0x4 applications clocks, 0x20/0x40 thermal, …). `glabench bench` records it
// after the peak measurements (the GPU busy) and at the end of a run, so that a
// throttled run shows in its results.
#pragma once

#include <nlohmann/json.hpp>

namespace glabench {

// {"sm_clock_mhz", "memory_clock_mhz", "temperature_c", "power_w",
//  "clock_event_reasons"}, each where NVML answers; {"nvml": why} when it cannot be read.
nlohmann::json read_gpu_state(int device_id);

}  // namespace glabench
