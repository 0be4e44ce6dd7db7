#include "verify_case_json.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "json_fields.hpp"

namespace glabench {
namespace {

// A checked tensor. NaN is not JSON: a non-finite rel_l2 or max_abs is null (read back as
// NaN). Where an output is not finite, how many elements are NaN or Inf, and the first's
// index. Where part of the reference lies below the output dtype's normal range, that
// part's rounding error relative to it (underflow, tensor_check.hpp).
constexpr auto tensor_check_fields = [](auto& f, auto& c) {
  f("name", c.tensor);
  f.number_or_null("rel_l2", c.rel_l2);
  f.number_or_null("max_abs", c.max_abs);
  f("threshold", c.threshold);
  f("finite", c.finite);
  f("passed", c.passed);
  f.present_if(c.underflow > 0, "underflow", c.underflow);
  f.present_if(c.non_finite != 0, "non_finite", c.non_finite);
  f.present_if(c.non_finite != 0, "elements", c.elements);
  f.present_if(c.non_finite != 0, "first_non_finite", c.first_non_finite);
};

constexpr auto directional_fields = [](auto& f, auto& d) {
  f("input", d.input);
  f("finite_difference", d.finite_difference);
  f("analytic", d.analytic);
  f("error", d.error);
};

constexpr auto gradcheck_fields = [](auto& f, auto& g) {
  f("passed", g.passed);
  f("worst_error", g.worst_error);
  f("tolerance", g.tolerance);
  f("jacobian_checked", g.jacobian_checked);
  f("jacobian_error", g.jacobian_error);
  f("directional", g.directional, directional_fields);
};

// The case, written by `verify --json` and by a worker, read back from a worker. Files
// from before the devices were recorded have none (read as {0}); state_dtype (ABI 1.5)
// is there for ops with a state.
constexpr auto verify_case_fields = [](auto& f, auto& r) {
  f("backend", r.backend);
  f("fixture", r.fixture);
  f("fixture_path", r.fixture_path);
  f.named("op", r.op, op_name, parse_op);
  f.named("dtype", r.storage, dtype_name, parse_dtype);
  f.named("state_dtype", r.state_storage, dtype_name, parse_dtype);
  f.named("status", r.status, case_status_name, parse_case_status);
  f("message", r.message);
  f("seconds", r.seconds);
  f.present_if(true, "devices", r.devices);
  f("tensors", r.checks, tensor_check_fields);
  f("gradcheck", r.gradcheck, gradcheck_fields);
};

}  // namespace

nlohmann::json to_json(const verify_case_result& r) {
  return to_json_by(r, verify_case_fields);
}

verify_case_result verify_case_from_json(const nlohmann::json& j) {
  try {
    return from_json_by<verify_case_result>(j, verify_case_fields);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a verify case in JSON: ") + e.what());
  }
}

}  // namespace glabench
