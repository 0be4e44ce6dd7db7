#include "bad_fixtures.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "fixture.hpp"
#include "fixture_catalog.hpp"
#include "hdf5_handle.hpp"

namespace glabench::testing {
namespace {

namespace fs = std::filesystem;

fixture valid_fixture(const std::string& name) {
  for (const auto& r : fixture_recipes("small"))
    if (r.name == name) return make_fixture(r);
  throw std::logic_error("no recipe " + name);
}

// Opens a written fixture for editing.
class editor {
 public:
  explicit editor(const std::string& path)
      : file_(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose) {
    if (!file_.valid()) throw std::runtime_error("cannot edit " + path);
  }
  void delete_attr(const char* name) { H5Adelete(file_.get(), name); }
  void delete_dataset(const char* path) { H5Ldelete(file_.get(), path, H5P_DEFAULT); }
  void string_attr(const char* name, const std::string& value) {
    delete_attr(name);
    h5_handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), value.size() + 1);
    write_attr(name, type.get(), value.c_str());
  }
  void int_attr(const char* name, int64_t value) {
    delete_attr(name);
    write_attr(name, H5T_STD_I64LE, &value, H5T_NATIVE_INT64);
  }
  // Replaces a dataset with one of the given shape and file type, filled from values.
  void dataset(const char* path, const std::vector<hsize_t>& dims, hid_t file_type,
               const std::vector<double>& values) {
    delete_dataset(path);
    h5_handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                    H5Sclose);
    h5_handle d(H5Dcreate2(file_.get(), path, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT),
                H5Dclose);
    H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  }

 private:
  void write_attr(const char* name, hid_t type, const void* value, hid_t mem_type = -1) {
    h5_handle space(H5Screate(H5S_SCALAR), H5Sclose);
    h5_handle a(H5Acreate2(file_.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
    H5Awrite(a.get(), mem_type < 0 ? type : mem_type, value);
  }
  h5_handle file_;
};

}  // namespace

std::vector<bad_fixture> write_bad_fixtures(const std::string& dir) {
  silence_hdf5_errors();
  fs::create_directories(dir);
  fixture f = valid_fixture("gla_basic");  // B2 T16 H2 K8 V8, with do and dht
  const problem& p = f.prob;
  std::vector<bad_fixture> out;
  auto variant = [&](const std::string& name, const std::string& field, const std::string& rule,
                     auto edit) {
    const std::string path = (fs::path(dir) / (name + ".h5")).string();
    write_fixture(path, f);
    {
      editor e(path);
      edit(e);
    }
    out.push_back({path, field, rule});
  };
  const std::vector<hsize_t> qk = {hsize_t(p.B), hsize_t(p.T), hsize_t(p.H), hsize_t(p.K)};
  std::vector<double> qk_values = f.inputs.q.data;

  variant("missing_op", "attribute 'op'", "missing", [](editor& e) { e.delete_attr("op"); });
  variant("unknown_op", "attribute 'op'", "unknown op 'mamba'",
          [](editor& e) { e.string_attr("op", "mamba"); });
  variant("op_not_a_string", "attribute 'op'", "must be a string",
          [](editor& e) { e.int_attr("op", 3); });
  variant("schema_version", "attribute 'glabench_fixture'", "not supported",
          [](editor& e) { e.int_attr("glabench_fixture", 2); });
  variant("wrong_rank", "/inputs/q", "must have rank 4", [&](editor& e) {
    e.dataset("/inputs/q", {hsize_t(p.B * p.T), hsize_t(p.H), hsize_t(p.K)}, H5T_IEEE_F64LE,
              qk_values);
  });
  variant("wrong_shape", "/inputs/k", "must have shape [2, 16, 2, 8], found [2, 16, 2, 4]",
          [&](editor& e) {
            e.dataset("/inputs/k", {hsize_t(p.B), hsize_t(p.T), hsize_t(p.H), 4}, H5T_IEEE_F64LE,
                      qk_values);
          });
  variant("integer_dataset", "/inputs/k", "must be float64, found integer",
          [&](editor& e) { e.dataset("/inputs/k", qk, H5T_STD_I32LE, qk_values); });
  variant("float32_dataset", "/inputs/q", "must be float64, found float32",
          [&](editor& e) { e.dataset("/inputs/q", qk, H5T_IEEE_F32LE, qk_values); });
  variant("nan_input", "/inputs/q", "element 5 is NaN", [&](editor& e) {
    std::vector<double> v = qk_values;
    v[5] = std::numeric_limits<double>::quiet_NaN();
    e.dataset("/inputs/q", qk, H5T_IEEE_F64LE, v);
  });
  variant("positive_gate", "/inputs/g", "must be ≤ 0", [&](editor& e) {
    std::vector<double> g = f.inputs.g.data;
    g[3] = 0.25;
    e.dataset("/inputs/g", qk, H5T_IEEE_F64LE, g);
  });
  variant("missing_expected_gradient", "/expected/dg", "/inputs/do is present",
          [](editor& e) { e.delete_dataset("/expected/dg"); });
  variant("missing_input", "/inputs/v", "is missing",
          [](editor& e) { e.delete_dataset("/inputs/v"); });

  // A file cut short, and a file that is not HDF5 at all.
  const std::string truncated = (fs::path(dir) / "truncated.h5").string();
  write_fixture(truncated, f);
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  out.push_back({truncated, "(file)", "truncated"});
  const std::string text = (fs::path(dir) / "not_hdf5.h5").string();
  std::ofstream(text) << "op,B,T\ngla,1,2\n";
  out.push_back({text, "(file)", "not an HDF5 file"});
  return out;
}

}  // namespace glabench::testing
