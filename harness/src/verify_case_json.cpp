#include "verify_case_json.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace glabench {
namespace {

// NaN is not JSON: a non-finite value is recorded as null (and read back as NaN).
nlohmann::json num(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}
double num_from(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  return v.is_null() ? NAN : v.get<double>();
}

case_status parse_case_status(const std::string& name) {
  for (case_status s :
       {case_status::passed, case_status::failed, case_status::unsupported,
        case_status::unavailable, case_status::crashed, case_status::timeout, case_status::skipped})
    if (case_status_name(s) == name) return s;
  throw std::runtime_error("status: unknown case status '" + name + "'");
}

}  // namespace

nlohmann::json to_json(const verify_case_result& r) {
  nlohmann::json row = {{"backend", r.backend},
                        {"fixture", r.fixture},
                        {"fixture_path", r.fixture_path},
                        {"op", op_name(r.op)},
                        {"dtype", dtype_name(r.storage)},
                        {"status", case_status_name(r.status)},
                        {"message", r.message},
                        {"seconds", r.seconds},
                        {"devices", r.devices}};
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& c : r.checks) {
    nlohmann::json t = {{"name", c.tensor},          {"rel_l2", num(c.rel_l2)},
                        {"max_abs", num(c.max_abs)}, {"threshold", c.threshold},
                        {"finite", c.finite},        {"passed", c.passed}};
    if (c.non_finite) {  // how many elements are NaN or Inf, and the first's index
      t["non_finite"] = c.non_finite;
      t["elements"] = c.elements;
      t["first_non_finite"] = c.first_non_finite;
    }
    tensors.push_back(std::move(t));
  }
  row["tensors"] = tensors;
  if (r.gradcheck) {
    nlohmann::json dirs = nlohmann::json::array();
    for (const auto& d : r.gradcheck->directional)
      dirs.push_back({{"input", d.input},
                      {"finite_difference", d.finite_difference},
                      {"analytic", d.analytic},
                      {"error", d.error}});
    row["gradcheck"] = {{"passed", r.gradcheck->passed},
                        {"worst_error", r.gradcheck->worst_error},
                        {"tolerance", r.gradcheck->tolerance},
                        {"jacobian_checked", r.gradcheck->jacobian_checked},
                        {"jacobian_error", r.gradcheck->jacobian_error},
                        {"directional", dirs}};
  }
  return row;
}

verify_case_result verify_case_from_json(const nlohmann::json& j) {
  try {
    verify_case_result r;
    r.backend = j.at("backend").get<std::string>();
    r.fixture = j.at("fixture").get<std::string>();
    r.fixture_path = j.at("fixture_path").get<std::string>();
    const auto op = parse_op(j.at("op").get<std::string>());
    const auto d = parse_dtype(j.at("dtype").get<std::string>());
    if (!op || !d) throw std::runtime_error("op or dtype: unknown name");
    r.op = *op;
    r.storage = *d;
    r.status = parse_case_status(j.at("status").get<std::string>());
    r.message = j.at("message").get<std::string>();
    r.seconds = j.at("seconds").get<double>();
    if (j.contains("devices")) r.devices = j.at("devices").get<std::vector<int32_t>>();
    for (const auto& t : j.at("tensors")) {
      tensor_check c;
      c.tensor = t.at("name").get<std::string>();
      c.rel_l2 = num_from(t, "rel_l2");
      c.max_abs = num_from(t, "max_abs");
      c.threshold = t.at("threshold").get<double>();
      c.finite = t.at("finite").get<bool>();
      c.passed = t.at("passed").get<bool>();
      if (t.contains("non_finite")) {
        c.non_finite = t.at("non_finite").get<int64_t>();
        c.elements = t.at("elements").get<int64_t>();
        c.first_non_finite = t.at("first_non_finite").get<std::vector<int64_t>>();
      }
      r.checks.push_back(std::move(c));
    }
    if (j.contains("gradcheck")) {
      const nlohmann::json& g = j.at("gradcheck");
      reference::gradcheck_report report;
      report.passed = g.at("passed").get<bool>();
      report.worst_error = g.at("worst_error").get<double>();
      report.tolerance = g.at("tolerance").get<double>();
      report.jacobian_checked = g.at("jacobian_checked").get<bool>();
      report.jacobian_error = g.at("jacobian_error").get<double>();
      for (const auto& d : g.at("directional"))
        report.directional.push_back({d.at("input").get<std::string>(),
                                      d.at("finite_difference").get<double>(),
                                      d.at("analytic").get<double>(), d.at("error").get<double>()});
      r.gradcheck = std::move(report);
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a verify case in JSON: ") + e.what());
  }
}

}  // namespace glabench
