#include "decode_drift_json.hpp"

#include <stdexcept>
#include <string>

#include "json_fields.hpp"

namespace glabench {
namespace {

// NaN is not JSON: a rel_l2 of an output that is not finite is null (read back as NaN).
constexpr auto drift_point_fields = [](auto& f, auto& p) {
  f("step", p.step);
  f.number_or_null("o_rel_l2", p.o_rel_l2);
  f.number_or_null("state_rel_l2", p.state_rel_l2);
};

// The largest drift over every step run, and where.
constexpr auto max_drift_fields = [](auto& f, auto& r) {
  f("o_rel_l2", r.max_o_rel_l2);
  f("o_step", r.max_o_step);
  f("state_rel_l2", r.max_state_rel_l2);
  f("state_step", r.max_state_step);
};

constexpr auto decode_drift_result_fields = [](auto& f, auto& r) {
  f("backend", r.backend);
  f.named("op", r.op, op_name, parse_op);
  f.named("dtype", r.storage, dtype_name, parse_dtype);
  f.named("state_dtype", r.state_storage, dtype_name, parse_dtype);
  f("gates", r.gates);
  f.named("status", r.status, case_status_name, parse_case_status);
  f("message", r.message);
  f("seconds", r.seconds);
  f("devices", r.devices);
  f("steps", r.steps);
  f("steps_run", r.steps_run);
  f("threshold", r.threshold);
  f("checkpoints", r.checkpoints, drift_point_fields);
  f("max", r, max_drift_fields);
};

}  // namespace

nlohmann::json to_json(const decode_drift_result& r) {
  return to_json_by(r, decode_drift_result_fields);
}

decode_drift_result decode_drift_from_json(const nlohmann::json& j) {
  try {
    return from_json_by<decode_drift_result>(j, decode_drift_result_fields);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a decode-drift case in JSON: ") + e.what());
  }
}

}  // namespace glabench
