// What crosses the pipe between glabench and a worker (isolation.hpp), each struct
// described once, as the list of its fields (json_fields.hpp): the parent writes a
// request and reads the reply by the same description the worker reads the request and
// writes the reply by. The requests: describe a backend, verify one case (the fixture
// itself and the options), bench one configuration (bench_runner.hpp's job_request and
// options), run one decode-drift case (op, dtype, gate regime and the options: the worker
// draws the inputs itself). The replies: the backend's description, a verify case
// (verify_case_json.hpp, also `verify --json`'s entries), a bench row (results_row.hpp,
// as in a results file), a decode-drift case (decode_drift_json.hpp, also `decode-drift
// --json`'s entries).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend_build.hpp"
#include "decode_drift.hpp"
#include "dtype.hpp"
#include "fixture.hpp"
#include "glabench/backend.h"
#include "json_fields.hpp"
#include "verifier.hpp"

namespace glabench::worker_protocol {

// ---- a fixture, whole: the worker opens no file for it ------------------------------------

// A tensor: its shape and its values as bytes (CBOR binary, not numbers).
inline constexpr auto tensor_fields = [](auto& f, auto& t) {
  f("shape", t.shape);
  f.bytes("data", t.data);
};

inline constexpr auto problem_fields = [](auto& f, auto& p) {
  f.named("op", p.op, op_name, parse_op);
  size_fields(f, p);
  f("scale", p.scale);
  f("causal", p.causal);
  f.present_if(p.varlen(), "cu_seqlens", p.cu_seqlens);
};

inline constexpr auto inputs_fields = [](auto& f, auto& in) {
  f("q", in.q, tensor_fields);
  f("k", in.k, tensor_fields);
  f("v", in.v, tensor_fields);
  f("g", in.g, tensor_fields);
  f("u", in.u, tensor_fields);
  f("h0", in.h0, tensor_fields);
  f("d_o", in.d_o, tensor_fields);
  f("dht", in.dht, tensor_fields);
};

inline constexpr auto outputs_fields = [](auto& f, auto& out) {
  f("o", out.o, tensor_fields);
  f("ht", out.ht, tensor_fields);
  f("lse", out.lse, tensor_fields);
};

inline constexpr auto gradients_fields = [](auto& f, auto& g) {
  f("dq", g.dq, tensor_fields);
  f("dk", g.dk, tensor_fields);
  f("dv", g.dv, tensor_fields);
  f("dg", g.dg, tensor_fields);
  f("du", g.du, tensor_fields);
  f("dh0", g.dh0, tensor_fields);
};

inline constexpr auto fixture_fields = [](auto& f, auto& x) {
  f("path", x.path);
  f("description", x.description);
  f("problem", x.prob, problem_fields);
  f("inputs", x.inputs, inputs_fields);
  f("expected", x.expected, outputs_fields);
  f("expected_grads", x.expected_grads, gradients_fields);
};

// ---- describe: the backend as the worker loaded it ----------------------------------------

// A plugin's table as the parent learns it: what `glabench list` shows and the runs
// select by, without its functions (they only run in workers).
struct backend_description {
  std::string name, version;
  DLDeviceType device_type = kDLCPU;
  uint32_t abi_major = 0, abi_minor = 0;
  std::vector<glabench_capability> capabilities;
  backend_build build;
  std::vector<std::string> knobs;
  uint32_t features = 0;     // GLABENCH_FEATURE_* (loaded_backend::features)
  std::string availability;  // what device_available() said: "available" or "unavailable: …"
};

inline constexpr auto capability_fields = [](auto& f, auto& c) {
  f("op", c.op);
  f("code", c.dtype.code);
  f("bits", c.dtype.bits);
  f("lanes", c.dtype.lanes);
  f("mode", c.mode);
};

inline constexpr auto backend_description_fields = [](auto& f, auto& d) {
  f("name", d.name);
  f("version", d.version);
  f("device_type", d.device_type);
  f("abi_major", d.abi_major);
  f("abi_minor", d.abi_minor);
  f("capabilities", d.capabilities, capability_fields);
  f("build", d.build, backend_build_fields);
  f("knobs", d.knobs);
  f("features", d.features);
  f("availability", d.availability);
};

// ---- verify: one case --------------------------------------------------------------------

inline constexpr auto verify_options_fields = [](auto& f, auto& o) {
  f("tolerance", o.tolerance);
  f("gradcheck", o.gradcheck);
  f("devices", o.devices);
};

// ---- decode_drift: one chained-decode case ----------------------------------------------

inline constexpr auto decode_drift_options_fields = [](auto& f, auto& o) {
  f("B", o.B);
  f("H", o.H);
  f("K", o.K);
  f("V", o.V);
  f("steps", o.steps);
  f("seed", o.seed);
  f("tolerance", o.tolerance);
  f("devices", o.devices);
};

}  // namespace glabench::worker_protocol
