// Reading and validating a v1 fixture (docs/design.md §4). Accepts integer attributes of any
// width and both fixed- and variable-length strings, as h5py writes them.
#include <cmath>
#include <filesystem>
#include <vector>

#include "fixture.hpp"
#include "hdf5_handle.hpp"

namespace glabench {
namespace {

std::string class_name(H5T_class_t c, size_t size) {
  switch (c) {
    case H5T_INTEGER:
      return "integer";
    case H5T_FLOAT:
      return size == 4 ? "float32" : size == 2 ? "float16" : "float" + std::to_string(size * 8);
    case H5T_STRING:
      return "string";
    default:
      return "a non-numeric type";
  }
}

class fixture_file {
 public:
  explicit fixture_file(const std::string& path) : path_(path) {
    if (!std::filesystem::exists(path)) fail("(file)", "does not exist");
    if (H5Fis_hdf5(path.c_str()) <= 0) fail("(file)", "is not an HDF5 file (no HDF5 signature)");
    file_ = h5_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file_.valid()) fail("(file)", "cannot be opened as HDF5 (truncated or corrupt file)");
  }

  [[noreturn]] void fail(const std::string& field, const std::string& rule) const {
    throw fixture_error(path_, field, rule);
  }

  bool has_attr(const char* name) const { return H5Aexists(file_.get(), name) > 0; }

  int64_t int_attr(const char* name) const {
    h5_handle a = open_attr(name);
    h5_handle type(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_INTEGER)
      fail(std::string("attribute '") + name + "'",
           "must be an integer, found " +
               class_name(H5Tget_class(type.get()), H5Tget_size(type.get())));
    int64_t value = 0;
    if (H5Aread(a.get(), H5T_NATIVE_INT64, &value) < 0)
      fail(std::string("attribute '") + name + "'", "cannot be read");
    return value;
  }

  double float_attr(const char* name) const {
    h5_handle a = open_attr(name);
    h5_handle type(H5Aget_type(a.get()), H5Tclose);
    const H5T_class_t c = H5Tget_class(type.get());
    if (c != H5T_FLOAT && c != H5T_INTEGER)
      fail(std::string("attribute '") + name + "'",
           "must be a number, found " + class_name(c, H5Tget_size(type.get())));
    double value = 0;
    if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &value) < 0)
      fail(std::string("attribute '") + name + "'", "cannot be read");
    return value;
  }

  std::string string_attr(const char* name) const {
    const std::string field = std::string("attribute '") + name + "'";
    h5_handle a = open_attr(name);
    h5_handle type(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING)
      fail(field, "must be a string, found " +
                      class_name(H5Tget_class(type.get()), H5Tget_size(type.get())));
    if (H5Tis_variable_str(type.get()) > 0) {
      h5_handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(mem.get(), H5T_VARIABLE);
      H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
      char* text = nullptr;
      if (H5Aread(a.get(), mem.get(), &text) < 0 || !text) fail(field, "cannot be read");
      std::string value(text);
      H5free_memory(text);
      return value;
    }
    const size_t size = H5Tget_size(type.get());
    std::vector<char> buf(size + 1, '\0');
    h5_handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), size + 1);
    if (H5Aread(a.get(), mem.get(), buf.data()) < 0) fail(field, "cannot be read");
    return std::string(buf.data());
  }

  bool has_dataset(const std::string& path) const {
    const size_t slash = path.find('/', 1);
    if (slash != std::string::npos &&
        H5Lexists(file_.get(), path.substr(0, slash).c_str(), H5P_DEFAULT) <= 0)
      return false;
    return H5Lexists(file_.get(), path.c_str(), H5P_DEFAULT) > 0;
  }

  // Reads a float64 dataset of exactly `shape`, all values finite.
  tensor dataset(const std::string& path, const std::vector<int64_t>& shape) const {
    if (!has_dataset(path))
      fail(path, "is missing; this fixture needs it with shape " + shape_string(shape));
    h5_handle d(H5Dopen2(file_.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid()) fail(path, "is not a dataset");
    h5_handle type(H5Dget_type(d.get()), H5Tclose);
    const H5T_class_t c = H5Tget_class(type.get());
    const size_t size = H5Tget_size(type.get());
    if (c != H5T_FLOAT || size != 8) fail(path, "must be float64, found " + class_name(c, size));
    h5_handle space(H5Dget_space(d.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(rank > 0 ? rank : 0);
    if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    const std::vector<int64_t> found(dims.begin(), dims.end());
    if (rank != static_cast<int>(shape.size()))
      fail(path, "must have rank " + std::to_string(shape.size()) + " " + shape_string(shape) +
                     ", found rank " + std::to_string(rank) + " " + shape_string(found));
    if (found != shape)
      fail(path, "must have shape " + shape_string(shape) + ", found " + shape_string(found));
    tensor t(shape);
    if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.ptr()) < 0)
      fail(path, "cannot be read (truncated or corrupt file)");
    for (size_t i = 0; i < t.data.size(); ++i)
      if (!std::isfinite(t.data[i]))
        fail(path, "element " + std::to_string(i) + " is " +
                       (std::isnan(t.data[i]) ? "NaN" : "infinite") +
                       "; every value must be finite");
    return t;
  }

  std::optional<tensor> optional_dataset(const std::string& path,
                                         const std::vector<int64_t>& shape) const {
    if (!has_dataset(path)) return std::nullopt;
    return dataset(path, shape);
  }

  void require_absent(const std::string& path, const std::string& why) const {
    if (has_dataset(path)) fail(path, why);
  }

 private:
  h5_handle open_attr(const char* name) const {
    if (!has_attr(name))
      fail(std::string("attribute '") + name + "'", "is missing from the root group");
    return h5_handle(H5Aopen(file_.get(), name, H5P_DEFAULT), H5Aclose);
  }

  std::string path_;
  h5_handle file_;
};

}  // namespace

std::string fixture::name() const {
  return std::filesystem::path(path).stem().string();
}

fixture read_fixture(const std::string& path) {
  silence_hdf5_errors();
  const fixture_file file(path);
  fixture f;
  f.path = path;

  const int64_t version = file.int_attr("glabench_fixture");
  if (version != kFixtureSchemaVersion)
    file.fail("attribute 'glabench_fixture'",
              "schema version " + std::to_string(version) +
                  " is not supported (this glabench reads version 1)");
  const std::string op = file.string_attr("op");
  const auto kind = parse_op(op);
  if (!kind)
    file.fail("attribute 'op'", "unknown op '" + op + "' (expected gla, rwkv6 or softmax_attn)");
  problem& p = f.prob;
  p.op = *kind;
  const std::pair<const char*, int64_t*> sizes[] = {
      {"B", &p.B}, {"T", &p.T}, {"H", &p.H}, {"K", &p.K}, {"V", &p.V}};
  for (auto [name, field] : sizes) {
    *field = file.int_attr(name);
    if (*field < 1)
      file.fail(std::string("attribute '") + name + "'",
                "must be ≥ 1, found " + std::to_string(*field));
  }
  p.scale = file.float_attr("scale");
  if (!std::isfinite(p.scale)) file.fail("attribute 'scale'", "must be finite");
  if (p.op == op_kind::softmax_attn) {
    const int64_t causal = file.int_attr("causal");
    if (causal != 0 && causal != 1)
      file.fail("attribute 'causal'", "must be 0 or 1, found " + std::to_string(causal));
    p.causal = causal == 1;
  }
  if (file.has_attr("description")) f.description = file.string_attr("description");

  op_inputs& in = f.inputs;
  in.q = file.dataset("/inputs/q", p.qk_shape());
  in.k = file.dataset("/inputs/k", p.qk_shape());
  in.v = file.dataset("/inputs/v", p.v_shape());
  const std::string op_label = std::string(op_name(p.op));
  if (p.has_gate()) {
    in.g = file.dataset("/inputs/g", p.qk_shape());
    for (size_t i = 0; i < in.g.data.size(); ++i)
      if (in.g.data[i] > 0)
        file.fail("/inputs/g", "element " + std::to_string(i) + " is " +
                                   std::to_string(in.g.data[i]) + " > 0; " + op_label +
                                   " gates are natural-log decays and must be ≤ 0");
  } else {
    file.require_absent("/inputs/g", "softmax_attn fixtures have no gate");
  }
  if (p.has_bonus())
    in.u = file.dataset("/inputs/u", p.u_shape());
  else
    file.require_absent("/inputs/u", "only rwkv6 fixtures have a bonus u");
  if (p.has_state()) {
    in.h0 = file.optional_dataset("/inputs/h0", p.state_shape());
  } else {
    for (const char* path : {"/inputs/h0", "/inputs/dht", "/expected/ht", "/expected/dh0"})
      file.require_absent(path, "softmax_attn has no recurrent state");
  }
  in.d_o = file.optional_dataset("/inputs/do", p.v_shape());
  if (p.has_state()) in.dht = file.optional_dataset("/inputs/dht", p.state_shape());
  if (in.dht && !in.d_o)
    file.fail("/inputs/dht", "is present without /inputs/do; gradients need /inputs/do");

  f.expected.o = file.dataset("/expected/o", p.v_shape());
  if (p.has_state()) f.expected.ht = file.dataset("/expected/ht", p.state_shape());
  if (p.op == op_kind::softmax_attn)
    f.expected.lse = file.dataset("/expected/lse", p.lse_shape());
  else
    file.require_absent("/expected/lse", "only softmax_attn fixtures have lse");

  const char* grad_paths[] = {"/expected/dq", "/expected/dk", "/expected/dv",
                              "/expected/dg", "/expected/du", "/expected/dh0"};
  if (!in.d_o) {
    for (const char* path : grad_paths)
      file.require_absent(path, "an expected gradient needs the cotangent /inputs/do");
    return f;
  }
  auto need = [&](const char* path, const std::vector<int64_t>& shape) {
    if (!file.has_dataset(path))
      file.fail(path,
                "is missing; /inputs/do is present, so every expected gradient must be (shape " +
                    shape_string(shape) + ")");
    return file.dataset(path, shape);
  };
  op_gradients& g = f.expected_grads.emplace();
  g.dq = need("/expected/dq", p.qk_shape());
  g.dk = need("/expected/dk", p.qk_shape());
  g.dv = need("/expected/dv", p.v_shape());
  if (p.has_gate())
    g.dg = need("/expected/dg", p.qk_shape());
  else
    file.require_absent("/expected/dg", "softmax_attn has no gate");
  if (p.has_bonus())
    g.du = need("/expected/du", p.u_shape());
  else
    file.require_absent("/expected/du", "only rwkv6 has a bonus u");
  if (in.h0)
    g.dh0 = need("/expected/dh0", p.state_shape());
  else
    file.require_absent("/expected/dh0", "dh0 needs /inputs/h0");
  return f;
}

}  // namespace glabench
