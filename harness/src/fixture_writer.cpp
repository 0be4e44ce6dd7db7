// Writing a fixture (docs/design.md §4): fixed-length string attributes, int64 sizes, and
// float64 datasets under /inputs and /expected, plus int64 /inputs/cu_seqlens for a packed
// batch. Schema version 1, or 2 where cu_seqlens needs it (fixture_schema_version).
// Written to a temporary file and renamed into place.
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "fixture.hpp"
#include "hdf5_handle.hpp"

namespace glabench {
namespace {

class fixture_file_writer {
 public:
  explicit fixture_file_writer(const std::string& path) : path_(path) {
    file_ = h5_handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!file_.valid()) throw std::runtime_error(path + ": cannot create the file");
    for (const char* group : {"/inputs", "/expected"}) {
      h5_handle g(H5Gcreate2(file_.get(), group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
      if (!g.valid()) throw std::runtime_error(path + ": cannot create group " + group);
    }
  }

  void int_attr(const char* name, int64_t value) {
    attr(name, H5T_NATIVE_INT64, H5T_STD_I64LE, &value);
  }
  void float_attr(const char* name, double value) {
    attr(name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, &value);
  }
  void string_attr(const char* name, const std::string& value) {
    h5_handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), value.size() + 1);
    H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
    attr(name, type.get(), type.get(), value.c_str());
  }

  void dataset(const std::string& path, const tensor& t) {
    std::vector<hsize_t> dims(t.shape.begin(), t.shape.end());
    h5_handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                    H5Sclose);
    h5_handle d(H5Dcreate2(file_.get(), path.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                           H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose);
    if (!d.valid() ||
        H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.ptr()) < 0)
      throw std::runtime_error(path_ + ": cannot write " + path);
  }
  void int64_dataset(const std::string& path, const std::vector<int64_t>& values) {
    const hsize_t n = values.size();
    h5_handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    h5_handle d(H5Dcreate2(file_.get(), path.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT,
                           H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose);
    if (!d.valid() ||
        H5Dwrite(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
      throw std::runtime_error(path_ + ": cannot write " + path);
  }
  void optional_dataset(const std::string& path, const tensor& t) {
    if (!t.data.empty()) dataset(path, t);
  }

  void close() {
    if (H5Fclose(file_.get()) < 0) throw std::runtime_error(path_ + ": cannot close the file");
    file_ = h5_handle();
  }

 private:
  void attr(const char* name, hid_t mem_type, hid_t file_type, const void* value) {
    h5_handle space(H5Screate(H5S_SCALAR), H5Sclose);
    h5_handle a(H5Acreate2(file_.get(), name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
    if (!a.valid() || H5Awrite(a.get(), mem_type, value) < 0)
      throw std::runtime_error(path_ + ": cannot write attribute " + name);
  }

  std::string path_;
  h5_handle file_;
};

}  // namespace

void write_fixture(const std::string& path, const fixture& f) {
  silence_hdf5_errors();
  const std::string temp = path + ".tmp-" + std::to_string(getpid());
  try {
    fixture_file_writer w(temp);
    const problem& p = f.prob;
    w.int_attr("glabench_fixture", fixture_schema_version(p));
    w.string_attr("op", std::string(op_name(p.op)));
    w.int_attr("B", p.B);
    w.int_attr("T", p.T);
    w.int_attr("H", p.H);
    w.int_attr("K", p.K);
    w.int_attr("V", p.V);
    w.float_attr("scale", p.scale);
    if (p.op == op_kind::softmax_attn) w.int_attr("causal", p.causal ? 1 : 0);
    if (!f.description.empty()) w.string_attr("description", f.description);

    const op_inputs& in = f.inputs;
    w.dataset("/inputs/q", in.q);
    w.dataset("/inputs/k", in.k);
    w.dataset("/inputs/v", in.v);
    if (p.varlen()) w.int64_dataset("/inputs/cu_seqlens", p.cu_seqlens);
    w.optional_dataset("/inputs/g", in.g);
    w.optional_dataset("/inputs/u", in.u);
    if (in.h0) w.dataset("/inputs/h0", *in.h0);
    if (in.d_o) w.dataset("/inputs/do", *in.d_o);
    if (in.dht) w.dataset("/inputs/dht", *in.dht);

    w.dataset("/expected/o", f.expected.o);
    w.optional_dataset("/expected/ht", f.expected.ht);
    w.optional_dataset("/expected/lse", f.expected.lse);
    if (f.expected_grads) {
      const op_gradients& g = *f.expected_grads;
      w.dataset("/expected/dq", g.dq);
      w.dataset("/expected/dk", g.dk);
      w.dataset("/expected/dv", g.dv);
      w.optional_dataset("/expected/dg", g.dg);
      w.optional_dataset("/expected/du", g.du);
      w.optional_dataset("/expected/dh0", g.dh0);
    }
    w.close();
    std::filesystem::rename(temp, path);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temp, ec);
    throw;
  }
}

}  // namespace glabench
