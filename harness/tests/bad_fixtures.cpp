#include "bad_fixtures.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "fixture.hpp"
#include "fixture_catalog.hpp"
#include "glabench/reference/ops.hpp"
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
  // An attribute stored with the given file type, converted from a double.
  void number_attr(const char* name, hid_t file_type, double value) {
    delete_attr(name);
    write_attr(name, file_type, &value, H5T_NATIVE_DOUBLE);
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

  // A copy of `type` committed to the file without a name: a dataset made with it keeps its
  // datatype message shared, in the committed type's header.
  h5_handle committed_type(hid_t type) {
    h5_handle t(H5Tcopy(type), H5Tclose);
    H5Tcommit_anon(file_.get(), t.get(), H5P_DEFAULT, H5P_DEFAULT);
    return t;
  }

  // Hostile shapes and links: each is what a crafted file of a few KB can hold.

  // An attribute of n int64 values where the reader wants one.
  void int_array_attr(const char* name, hsize_t n) {
    delete_attr(name);
    std::vector<int64_t> values(n, 2);
    h5_handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    h5_handle a(H5Acreate2(file_.get(), name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
    H5Awrite(a.get(), H5T_NATIVE_INT64, values.data());
  }
  // n fixed-length strings, each `value`.
  void string_array_attr(const char* name, const std::string& value, hsize_t n) {
    delete_attr(name);
    h5_handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), value.size() + 1);
    std::string values;
    for (hsize_t i = 0; i < n; ++i) values.append(value.c_str(), value.size() + 1);
    h5_handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    h5_handle a(H5Acreate2(file_.get(), name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
    H5Awrite(a.get(), type.get(), values.data());
  }
  // An attribute with an empty (null) dataspace: no value at all.
  void null_attr(const char* name, hid_t type) {
    delete_attr(name);
    h5_handle space(H5Screate(H5S_NULL), H5Sclose);
    h5_handle a(H5Acreate2(file_.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  }
  // A variable-length string, as h5py writes them (no 64 KiB header limit).
  void vlen_string_attr(const char* name, const std::string& value) {
    delete_attr(name);
    h5_handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), H5T_VARIABLE);
    const char* text = value.c_str();
    write_attr(name, type.get(), &text);
  }
  // A chunked dataset that declares `dims` and stores nothing: a small file, however
  // large the shape.
  void unallocated_dataset(const char* path, const std::vector<hsize_t>& dims) {
    delete_dataset(path);
    h5_handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                    H5Sclose);
    h5_handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    std::vector<hsize_t> chunk(dims.size(), 1);
    chunk.back() = dims.back();
    H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
    h5_handle d(H5Dcreate2(file_.get(), path, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, dcpl.get(),
                           H5P_DEFAULT),
                H5Dclose);
  }
  // A float64 dataset whose raw data is the external file `data_file` (never opened here).
  void external_storage_dataset(const char* path, const std::vector<hsize_t>& dims,
                                const std::string& data_file) {
    delete_dataset(path);
    h5_handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                    H5Sclose);
    h5_handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_external(dcpl.get(), data_file.c_str(), 0, H5F_UNLIMITED);
    h5_handle d(H5Dcreate2(file_.get(), path, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, dcpl.get(),
                           H5P_DEFAULT),
                H5Dclose);
  }
  // A float64 dataset stored compact (its data in its own header), filled from values.
  void compact_dataset(const char* path, const std::vector<hsize_t>& dims,
                       const std::vector<double>& values) {
    delete_dataset(path);
    h5_handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                    H5Sclose);
    h5_handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_layout(dcpl.get(), H5D_COMPACT);
    h5_handle d(H5Dcreate2(file_.get(), path, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, dcpl.get(),
                           H5P_DEFAULT),
                H5Dclose);
    H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  }
  // A virtual dataset drawing all of its data from `source_file`:`source_dataset`.
  void virtual_dataset(const char* path, const std::vector<hsize_t>& dims,
                       const std::string& source_file, const char* source_dataset) {
    delete_dataset(path);
    h5_handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                    H5Sclose);
    h5_handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_virtual(dcpl.get(), space.get(), source_file.c_str(), source_dataset, space.get());
    h5_handle d(H5Dcreate2(file_.get(), path, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, dcpl.get(),
                           H5P_DEFAULT),
                H5Dclose);
  }
  void group(const char* path) {
    h5_handle g(H5Gcreate2(file_.get(), path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  }
  void soft_link(const char* target, const char* path) {
    delete_dataset(path);
    H5Lcreate_soft(target, file_.get(), path, H5P_DEFAULT, H5P_DEFAULT);
  }
  void external_link(const std::string& target_file, const char* target, const char* path) {
    delete_dataset(path);
    H5Lcreate_external(target_file.c_str(), target, file_.get(), path, H5P_DEFAULT, H5P_DEFAULT);
  }
  // A link of a user-defined class, registered only in this (the writing) process.
  void user_defined_link(const char* path) {
    static const H5L_traverse_func_t traverse = [](const char*, hid_t, const void*, size_t, hid_t,
                                                   hid_t) -> hid_t { return H5I_INVALID_HID; };
    static const H5L_class_t link_class = {H5L_LINK_CLASS_T_VERS,
                                           static_cast<H5L_type_t>(kUserLinkClass),
                                           "glabench test link",
                                           nullptr,
                                           nullptr,
                                           nullptr,
                                           traverse,
                                           nullptr,
                                           nullptr};
    if (H5Lis_registered(static_cast<H5L_type_t>(kUserLinkClass)) <= 0) H5Lregister(&link_class);
    delete_dataset(path);
    const char udata[] = "/inputs/k";
    H5Lcreate_ud(file_.get(), path, static_cast<H5L_type_t>(kUserLinkClass), udata, sizeof udata,
                 H5P_DEFAULT, H5P_DEFAULT);
    H5Lunregister(static_cast<H5L_type_t>(kUserLinkClass));
  }
  static constexpr int kUserLinkClass = 100;

 private:
  void write_attr(const char* name, hid_t type, const void* value, hid_t mem_type = -1) {
    h5_handle space(H5Screate(H5S_SCALAR), H5Sclose);
    h5_handle a(H5Acreate2(file_.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
    H5Awrite(a.get(), mem_type < 0 ? type : mem_type, value);
  }
  h5_handle file_;
};

// Replaces the one occurrence of `from` in the file at `path` by `to` (as long): a
// corruption the HDF5 API would not write.
void patch_bytes(const std::string& path, const std::string& from, const std::string& to) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t at = bytes.find(from);
  if (at == std::string::npos || bytes.find(from, at + 1) != std::string::npos)
    throw std::logic_error("patch_bytes: the pattern is not in " + path + " exactly once");
  bytes.replace(at, from.size(), to);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("patch_bytes: cannot write " + path);
}

// A copy of a predefined datatype, changed by `edit` (H5Tset_precision and the like).
template <typename Edit>
h5_handle edited_type(hid_t base, Edit edit) {
  h5_handle t(H5Tcopy(base), H5Tclose);
  edit(t.get());
  return t;
}

}  // namespace

fixture packed_fixture(op_kind op, bool causal) {
  fixture f;
  f.prob = problem{op, 1, 6, 2, 4, 4, 0.5, causal, {}};
  f.prob.cu_seqlens = {0, 2, 3, 6};
  f.inputs = make_random_inputs(f.prob, {});
  f.expected = reference::forward(f.prob, f.inputs);
  f.expected_grads = reference::backward(f.prob, f.inputs);
  return f;
}

std::vector<bad_fixture> write_bad_fixtures(const std::string& dir) {
  silence_hdf5_errors();
  fs::create_directories(dir);
  fixture f = valid_fixture("gla_basic");  // B2 T16 H2 K8 V8, with do and dht
  const problem& p = f.prob;
  std::vector<bad_fixture> out;
  auto variant_of = [&](const fixture& base, const std::string& name, const std::string& field,
                        const std::string& rule, auto edit) {
    const std::string path = (fs::path(dir) / (name + ".h5")).string();
    write_fixture(path, base);
    {
      editor e(path);
      edit(e);
    }
    out.push_back({path, field, rule});
  };
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
          [](editor& e) { e.int_attr("glabench_fixture", 3); });
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

  // A packed batch's offsets (schema version 2), each rule broken once.
  const fixture packed = packed_fixture();
  const char* cu = "/inputs/cu_seqlens";
  auto offsets = [cu](editor& e, const std::vector<hsize_t>& dims, hid_t type,
                      const std::vector<double>& values) { e.dataset(cu, dims, type, values); };
  variant_of(packed, "varlen_in_version_1", cu, "is not part of schema version 1",
             [](editor& e) { e.int_attr("glabench_fixture", 1); });
  variant_of(packed, "varlen_batch_of_two", cu, "needs B = 1",
             [](editor& e) { e.int_attr("B", 2); });
  variant_of(packed, "varlen_float_offsets", cu,
             "must be an integer dataset (int32 or int64), found float64", [&](editor& e) {
               offsets(e, {4}, H5T_IEEE_F64LE, {0, 2, 3, 6});
             });
  variant_of(packed, "varlen_int16_offsets", cu,
             "has a non-standard integer datatype, a 16-bit integer with bit offset 0 and "
             "precision 16; it must be int32 or int64",
             [&](editor& e) {
               offsets(e, {4}, H5T_STD_I16LE, {0, 2, 3, 6});
             });
  variant_of(packed, "varlen_rank_2", cu, "must have rank 1 [N + 1], found rank 2 [2, 2]",
             [&](editor& e) {
               offsets(e, {2, 2}, H5T_STD_I64LE, {0, 2, 3, 6});
             });
  variant_of(packed, "varlen_no_sequence", cu, "must hold N + 1 ≥ 2 offsets (N ≥ 1 sequences)",
             [&](editor& e) { offsets(e, {1}, H5T_STD_I64LE, {0}); });
  variant_of(packed, "varlen_more_offsets_than_tokens", cu,
             "holds 8 offsets, more than T + 1 = 7: some sequence would have no token",
             [&](editor& e) {
               offsets(e, {8}, H5T_STD_I32LE, {0, 1, 2, 3, 4, 5, 6, 7});
             });
  variant_of(packed, "varlen_not_from_zero", cu, "element 0 is 1; the offsets must start at 0",
             [&](editor& e) {
               offsets(e, {4}, H5T_STD_I64LE, {1, 2, 3, 6});
             });
  variant_of(packed, "varlen_empty_sequence", cu,
             "element 2 is 2, not more than element 1 (2); the offsets must increase strictly",
             [&](editor& e) {
               offsets(e, {4}, H5T_STD_I64BE, {0, 2, 2, 6});
             });
  variant_of(packed, "varlen_decreasing", cu, "element 2 is 1, not more than element 1 (3)",
             [&](editor& e) {
               offsets(e, {4}, H5T_STD_I32BE, {0, 3, 1, 6});
             });
  variant_of(packed, "varlen_short_of_t", cu, "the last element (3) is 5; it must be T = 6",
             [&](editor& e) {
               offsets(e, {4}, H5T_STD_U32LE, {0, 2, 3, 5});
             });
  variant_of(packed, "varlen_huge_unsigned", cu,
             "element 1 is 10000000000000000000; an offset lies in [0, T]", [&](editor& e) {
               offsets(e, {4}, H5T_STD_U64LE, {0, 1e19, 3, 6});
             });
  variant_of(packed, "varlen_state_per_row", "/inputs/h0",
             "must have shape [3, 2, 4, 4], found [1, 2, 4, 4]", [&](editor& e) {
               e.dataset("/inputs/h0", {1, 2, 4, 4}, H5T_IEEE_F64LE, std::vector<double>(32));
             });
  variant_of(packed, "varlen_expected_state_per_row", "/expected/dh0",
             "must have shape [3, 2, 4, 4], found [1, 2, 4, 4]", [&](editor& e) {
               e.dataset("/expected/dh0", {1, 2, 4, 4}, H5T_IEEE_F64LE, std::vector<double>(32));
             });

  // Hostile fixtures: crafted to overrun a buffer, to make the reader allocate
  // terabytes, or to make it open a FIFO (which would block it forever).
  variant("array_attribute", "attribute 'B'", "must be a single value, found an array of 1000",
          [](editor& e) { e.int_array_attr("B", 1000); });
  variant("string_array_attribute", "attribute 'op'",
          "must be a single value, found an array of 64",
          [](editor& e) { e.string_array_attr("op", "gla", 64); });
  variant("empty_attribute", "attribute 'scale'", "must be a single value, found none",
          [](editor& e) { e.null_attr("scale", H5T_IEEE_F64LE); });
  variant("string_for_integer", "attribute 'T'", "must be an integer, found string",
          [](editor& e) { e.string_attr("T", "16"); });
  variant("string_for_number", "attribute 'scale'", "must be a number, found string",
          [](editor& e) { e.string_attr("scale", "0.35"); });
  variant("huge_string_attribute", "attribute 'description'", "is longer than",
          [](editor& e) { e.vlen_string_attr("description", std::string(100000, 'x')); });
  // B·T·H·K·8 is 2^163: the product wraps around in 64 bits.
  variant("size_overflow", "attributes B, T, H, K, V", "overflows 64 bits", [](editor& e) {
    for (const char* n : {"B", "T", "H", "K", "V"}) e.int_attr(n, int64_t{1} << 32);
  });
  // T=2^30, H=K=V=2^10: q alone is 8 PiB, declared by a chunked dataset of no chunks.
  variant("over_memory_limit", "(file)", "over the limit of", [](editor& e) {
    e.int_attr("T", int64_t{1} << 30);
    for (const char* n : {"H", "K", "V"}) e.int_attr(n, 1024);
    e.unallocated_dataset("/inputs/q", {2, hsize_t{1} << 30, 1024, 1024});
  });
  const std::string fifo = (fs::path(dir) / "fifo.pipe").string();
  fs::remove(fifo);
  if (mkfifo(fifo.c_str(), 0600) != 0) throw std::runtime_error("cannot make the FIFO " + fifo);
  variant("external_link_to_fifo", "/inputs/q", "is an external link to '" + fifo + ":/q'",
          [&](editor& e) { e.external_link(fifo, "/q", "/inputs/q"); });
  variant("external_group", "/expected", "is an external link",
          [&](editor& e) { e.external_link(fifo, "/expected", "/expected"); });
  variant("soft_link", "/inputs/k", "is a soft link to '/inputs/q'",
          [](editor& e) { e.soft_link("/inputs/q", "/inputs/k"); });
  variant("dangling_soft_link", "/inputs/h0", "is a soft link",
          [](editor& e) { e.soft_link("/nowhere/h0", "/inputs/h0"); });
  variant("user_defined_link", "/inputs/q", "is a user-defined link",
          [](editor& e) { e.user_defined_link("/inputs/q"); });
  variant("external_storage_fifo", "/inputs/v", "stores its data in the external file",
          [&](editor& e) { e.external_storage_dataset("/inputs/v", qk, fifo); });
  variant("virtual_dataset", "/expected/o", "is a virtual dataset",
          [&](editor& e) { e.virtual_dataset("/expected/o", qk, fifo, "/o"); });
  variant("unknown_dataset", "/inputs/H0", "is not part of the fixture schema",
          [&](editor& e) { e.dataset("/inputs/H0", qk, H5T_IEEE_F64LE, qk_values); });
  variant("unknown_expected_dataset", "/expected/o_old", "is not part of the fixture schema",
          [&](editor& e) { e.dataset("/expected/o_old", qk, H5T_IEEE_F64LE, qk_values); });
  variant("unknown_group", "/extras", "is not part of the fixture schema",
          [](editor& e) { e.group("/extras"); });
  variant("group_for_dataset", "/inputs/dht", "must be a dataset, found a group", [](editor& e) {
    e.delete_dataset("/inputs/dht");
    e.group("/inputs/dht");
  });

  // Numbers of a non-standard datatype. libhdf5 1.10 decodes a datatype's bit offset and
  // precision without checking them against its size, and its conversion then reads
  // past the value: an attribute V of bit offset 58624 made H5Aread read 7 KB beyond it
  // (found by fixture_reader_fuzzer). The API does not make such a type, so this is a
  // 32-bit integer of bit offset 8 and precision 16 whose datatype message in the file
  // (version 1, class integer; signed, little-endian; size 4; offset 8; precision 16) is
  // then patched to bit offset 58624 (0xE500).
  variant("int_attribute_bit_offset", "attribute 'V'",
          "has a non-standard integer datatype, a 32-bit integer with bit offset 58624 and "
          "precision 16; it must be a standard 8-, 16-, 32- or 64-bit integer",
          [](editor& e) {
            const h5_handle t = edited_type(H5T_STD_I32LE, [](hid_t t) {
              H5Tset_precision(t, 16);
              H5Tset_offset(t, 8);
            });
            e.number_attr("V", t.get(), 8);
          });
  patch_bytes(out.back().path, std::string("\x10\x08\0\0\x04\0\0\0\x08\0\x10\0", 12),
              std::string("\x10\x08\0\0\x04\0\0\0\0\xe5\x10\0", 12));
  // A compact dataset whose layout message declares 0 bytes of its 64: libhdf5 1.10 opens
  // it and then reads from a null buffer (found by fixture_reader_fuzzer). The API writes
  // the 64, so the message (version 3, class compact, size 64, then the values) is patched.
  const std::vector<hsize_t> v_dims = {hsize_t(p.B), hsize_t(p.T), hsize_t(p.H), hsize_t(p.V)};
  const std::vector<double> v_values = f.inputs.v.data;
  variant("compact_dataset_without_data", "/inputs/v",
          "is a compact dataset of " + std::to_string(v_values.size()) +
              " elements of 8 bytes that stores 0 bytes; it must store them all",
          [&](editor& e) { e.compact_dataset("/inputs/v", v_dims, v_values); });
  {
    const size_t bytes = v_values.size() * 8;  // under 64 KiB, as compact data must be
    const std::string size{char(bytes & 0xff), char(bytes >> 8)};
    const std::string first(reinterpret_cast<const char*>(v_values.data()), 8);
    patch_bytes(out.back().path, std::string("\x03\x00", 2) + size + first,
                std::string("\x03\x00\x00\x00", 4) + first);
  }
  // Datatypes the API makes and HDF5 converts correctly, but no fixture writer uses.
  variant("int_attribute_precision", "attribute 'B'",
          "has a non-standard integer datatype, a 64-bit integer with bit offset 8 and "
          "precision 40",
          [](editor& e) {
            const h5_handle t = edited_type(H5T_STD_I64LE, [](hid_t t) {
              H5Tset_precision(t, 40);
              H5Tset_offset(t, 8);
            });
            e.number_attr("B", t.get(), 2);
          });
  variant("int_attribute_padding", "attribute 'T'",
          "a 32-bit integer with bit offset 0 and precision 24, padded with other than zeros",
          [](editor& e) {
            const h5_handle t = edited_type(H5T_STD_I32BE, [](hid_t t) {
              H5Tset_precision(t, 24);
              H5Tset_pad(t, H5T_PAD_ONE, H5T_PAD_ONE);
            });
            e.number_attr("T", t.get(), 16);
          });
  variant("float_attribute_bias", "attribute 'scale'",
          "has a non-standard float datatype, a 64-bit float with bit offset 0 and precision "
          "64, sign bit 63, exponent bits 52+11, mantissa bits 0+52, exponent bias 1000; it "
          "must be a standard integer or an IEEE float16, float32 or float64",
          [](editor& e) {
            const h5_handle t = edited_type(H5T_IEEE_F64LE, [](hid_t t) { H5Tset_ebias(t, 1000); });
            e.number_attr("scale", t.get(), 0.25);
          });
  variant("float64_dataset_layout", "/inputs/q",
          "has a non-standard float datatype, a 64-bit float with bit offset 0 and precision "
          "64, sign bit 63, exponent bits 52+11, mantissa bits 0+52, exponent bias 1000; it "
          "must be an IEEE float64 (H5T_IEEE_F64LE or F64BE)",
          [&](editor& e) {
            const h5_handle t = edited_type(H5T_IEEE_F64BE, [](hid_t t) { H5Tset_ebias(t, 1000); });
            e.dataset("/inputs/q", qk, t.get(), qk_values);
          });

  // A shared object-header message (here the datatype of a committed type). libhdf5 1.10
  // decodes a message that claims to be shared through a SOHM table the file lacks by
  // reading through a null pointer (found by fixture_reader_fuzzer), so the reader refuses
  // shared messages before it opens an object.
  variant("shared_datatype", "/inputs/q", "has shared object-header messages", [&](editor& e) {
    const h5_handle t = e.committed_type(H5T_IEEE_F64LE);
    e.dataset("/inputs/q", qk, t.get(), qk_values);
  });

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
