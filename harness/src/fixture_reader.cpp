// Reading and validating a fixture of schema version 1 or 2 (docs/design.md §4,
// datasets/README.md). Accepts integer attributes of any width and both fixed- and
// variable-length strings, as h5py writes them, and a packed batch's offsets
// (/inputs/cu_seqlens, version 2) as int32 or int64 of either sign and byte order.
//
// A fixture is untrusted input, so before reading any of it the reader makes sure that
//   - the path names a regular file (a FIFO, device or socket is refused without being
//     opened for reading, so it cannot block), and HDF5 opens exactly the file checked;
//   - every link under /, /inputs and /expected is a hard link with a name the schema
//     has, to a group (/inputs, /expected) or to a dataset stored in the file itself (no
//     soft, external or user-defined links, no external storage, no virtual datasets:
//     each could lead to another file, a FIFO among them);
//   - every attribute is one value of the expected class before it is read into one;
//   - every number (attribute or dataset) has a standard datatype before HDF5 converts
//     it (standard_layout);
//   - the memory the datasets need, computed overflow-checked from the attributes (and
//     from the extent of /inputs/cu_seqlens, bounded by T + 1, which gives the number of
//     states), is within fixture_read_options::max_bytes before anything is allocated;
//   - the whole read ends: it runs in a child process first, so a file on which libhdf5
//     itself crashes or hangs is refused (read_fixture, contained_run.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <new>
#include <string_view>
#include <vector>

#include "contained_run.hpp"
#include "fixture.hpp"
#include "hdf5_handle.hpp"

namespace glabench {
namespace {

// Longer string attributes are refused before a buffer is sized from the file.
constexpr size_t kMaxStringAttrBytes = 64 * 1024;

// What require_standard_layout says a number may be.
constexpr const char* kStandardIntegers =
    "a standard 8-, 16-, 32- or 64-bit integer (H5T_STD_I*/U*, either byte order)";
constexpr const char* kStandardNumbers =
    "a standard integer or an IEEE float16, float32 or float64 (either byte order)";
constexpr const char* kOffsetIntegers =
    "int32 or int64, signed or unsigned (H5T_STD_I32*, I64*, U32*, U64*, either byte order)";

// The names each group may hold (datasets/README.md); which of them an op has is
// checked later, with the rule that explains it.
constexpr std::string_view kRootNames[] = {"expected", "inputs"};
constexpr std::string_view kInputNames[] = {"q",  "k",  "v",   "g",         "u",
                                            "h0", "do", "dht", "cu_seqlens"};
constexpr std::string_view kExpectedNames[] = {"o",  "ht", "lse", "dq", "dk",
                                               "dv", "dg", "du",  "dh0"};

template <size_t N>
bool contains(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

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

// A number's datatype as the file declares it, for a refusal: "a 32-bit integer with
// bit offset 58624 and precision 16".
std::string layout_string(hid_t type, H5T_class_t c) {
  const size_t size = H5Tget_size(type);
  std::string s = "a " + std::to_string(size * 8) + "-bit " +
                  (c == H5T_INTEGER ? "integer" : "float") + " with bit offset " +
                  std::to_string(H5Tget_offset(type)) + " and precision " +
                  std::to_string(H5Tget_precision(type));
  H5T_pad_t lsb = H5T_PAD_ERROR, msb = H5T_PAD_ERROR;
  if (H5Tget_pad(type, &lsb, &msb) >= 0 && (lsb != H5T_PAD_ZERO || msb != H5T_PAD_ZERO))
    s += ", padded with other than zeros";
  if (c == H5T_FLOAT) {
    size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0)
      s += ", sign bit " + std::to_string(spos) + ", exponent bits " + std::to_string(epos) + "+" +
           std::to_string(esize) + ", mantissa bits " + std::to_string(mpos) + "+" +
           std::to_string(msize) + ", exponent bias " + std::to_string(H5Tget_ebias(type));
  }
  return s;
}

// The IEEE half-precision layouts, made as h5py makes numpy's float16 (HDF5 1.10 has no
// predefined ones). Made once, kept for the life of the process.
hid_t ieee_f16(H5T_order_t order) {
  auto make = [](H5T_order_t o) {
    const hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    H5Tset_order(t, o);
    H5Tlock(t);
    return t;
  };
  static const hid_t le = make(H5T_ORDER_LE), be = make(H5T_ORDER_BE);
  return order == H5T_ORDER_BE ? be : le;
}

// Whether a number's datatype is a standard one: an 8- to 64-bit signed or unsigned
// integer, or an IEEE float16 (as h5py writes it), float32 or float64, in either byte
// order; H5Tequal compares size, bit offset, precision, padding, float fields and bias.
// Anything else is refused before HDF5 converts it: libhdf5 1.10 does not check a
// datatype's bit offset, precision or fields against its size when it decodes a file,
// and its conversions then read far past the value (an integer attribute of bit offset
// 58624 made H5Aread read 7 KB beyond it; found by harness/fuzz/fixture_reader_fuzzer).
bool standard_layout(hid_t type, H5T_class_t c) {
  if (c == H5T_INTEGER) {
    for (hid_t s :
         {H5T_STD_I8LE, H5T_STD_I8BE, H5T_STD_I16LE, H5T_STD_I16BE, H5T_STD_I32LE, H5T_STD_I32BE,
          H5T_STD_I64LE, H5T_STD_I64BE, H5T_STD_U8LE, H5T_STD_U8BE, H5T_STD_U16LE, H5T_STD_U16BE,
          H5T_STD_U32LE, H5T_STD_U32BE, H5T_STD_U64LE, H5T_STD_U64BE})
      if (H5Tequal(type, s) > 0) return true;
    return false;
  }
  if (c == H5T_FLOAT) {
    for (hid_t s : {H5T_IEEE_F32LE, H5T_IEEE_F32BE, H5T_IEEE_F64LE, H5T_IEEE_F64BE,
                    ieee_f16(H5T_ORDER_LE), ieee_f16(H5T_ORDER_BE)})
      if (H5Tequal(type, s) > 0) return true;
  }
  return false;
}

// Whether an integer datatype is one a packed batch's offsets may have: a standard 32- or
// 64-bit integer, signed or unsigned, in either byte order.
bool offsets_layout(hid_t type) {
  for (hid_t s : {H5T_STD_I32LE, H5T_STD_I32BE, H5T_STD_I64LE, H5T_STD_I64BE, H5T_STD_U32LE,
                  H5T_STD_U32BE, H5T_STD_U64LE, H5T_STD_U64BE})
    if (H5Tequal(type, s) > 0) return true;
  return false;
}

// "[2, 16, 2, 8]" for dimensions as the file declares them (unsigned 64-bit).
std::string dims_string(const std::vector<hsize_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(static_cast<unsigned long long>(dims[i]));
  return s + "]";
}

// "1234 bytes (1.2 KiB)"
std::string bytes_string(uint64_t n) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::string s = std::to_string(static_cast<unsigned long long>(n)) + " bytes";
  double x = static_cast<double>(n);
  int unit = -1;
  while (x >= 1024 && unit < 5) x /= 1024, ++unit;
  if (unit >= 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%.1f %s)", x, units[unit]);
    s += buf;
  }
  return s;
}

// A name read from the file, safe to print: control bytes escaped, at most 200 bytes.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 200)) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > 200) out += "...";
  return out;
}

std::string not_a_regular_file(mode_t mode) {
  const char* kind = S_ISDIR(mode)    ? "a folder"
                     : S_ISFIFO(mode) ? "a FIFO (named pipe)"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "a special file";
  return std::string("is ") + kind + ", not a regular file; fixtures are read only from " +
         "regular files";
}

class file_descriptor {
 public:
  file_descriptor() = default;
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  ~file_descriptor() { reset(); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

struct link_entry {
  std::string name;
  H5L_type_t type;
  size_t value_size;  // soft, external and user-defined links
};

// More links than any group of the schema has: the rest need not be listed, as one
// of the first ones is already unknown.
constexpr size_t kMaxLinksListed = 16;

herr_t collect_link(hid_t, const char* name, const H5L_info_t* info, void* data) {
  auto* out = static_cast<std::vector<link_entry>*>(data);
  out->push_back({name, info->type, info->type == H5L_TYPE_HARD ? 0 : info->u.val_size});
  return out->size() >= kMaxLinksListed ? 1 : 0;
}

class fixture_file {
 public:
  explicit fixture_file(const std::string& path) : path_(path) {
    const std::string hdf5_name = open_regular_file();
    if (H5Fis_hdf5(hdf5_name.c_str()) <= 0)
      fail("(file)", "is not an HDF5 file (no HDF5 signature)");
    file_ = h5_handle(H5Fopen(hdf5_name.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file_.valid()) fail("(file)", "cannot be opened as HDF5 (truncated or corrupt file)");
    fd_.reset();
    check_links();
  }

  [[noreturn]] void fail(const std::string& field, const std::string& rule) const {
    throw fixture_error(path_, field, rule);
  }

  bool has_attr(const char* name) const { return H5Aexists(file_.get(), name) > 0; }

  int64_t int_attr(const char* name) const {
    const std::string field = std::string("attribute '") + name + "'";
    h5_handle a = open_attr(name, field);
    h5_handle type(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_INTEGER)
      fail(field, "must be an integer, found " +
                      class_name(H5Tget_class(type.get()), H5Tget_size(type.get())));
    require_standard_layout(field, type.get(), H5T_INTEGER, kStandardIntegers);
    int64_t value = 0;
    if (H5Aread(a.get(), H5T_NATIVE_INT64, &value) < 0) fail(field, "cannot be read");
    return value;
  }

  double float_attr(const char* name) const {
    const std::string field = std::string("attribute '") + name + "'";
    h5_handle a = open_attr(name, field);
    h5_handle type(H5Aget_type(a.get()), H5Tclose);
    const H5T_class_t c = H5Tget_class(type.get());
    if (c != H5T_FLOAT && c != H5T_INTEGER)
      fail(field, "must be a number, found " + class_name(c, H5Tget_size(type.get())));
    require_standard_layout(field, type.get(), c, kStandardNumbers);
    double value = 0;
    if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &value) < 0) fail(field, "cannot be read");
    return value;
  }

  std::string string_attr(const char* name) const {
    const std::string field = std::string("attribute '") + name + "'";
    h5_handle a = open_attr(name, field);
    h5_handle type(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING)
      fail(field, "must be a string, found " +
                      class_name(H5Tget_class(type.get()), H5Tget_size(type.get())));
    const std::string too_long = "is longer than " + bytes_string(kMaxStringAttrBytes) +
                                 ", the most a string attribute may hold";
    if (H5Tis_variable_str(type.get()) > 0) {
      h5_handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(mem.get(), H5T_VARIABLE);
      H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
      char* text = nullptr;
      if (H5Aread(a.get(), mem.get(), &text) < 0 || !text) fail(field, "cannot be read");
      const std::unique_ptr<char, herr_t (*)(void*)> owned(text, H5free_memory);
      const size_t length = strnlen(text, kMaxStringAttrBytes + 1);
      if (length > kMaxStringAttrBytes) fail(field, too_long);
      return std::string(text, length);
    }
    const size_t size = H5Tget_size(type.get());
    if (size == 0) fail(field, "has a string type of size 0 (corrupt file)");
    if (size > kMaxStringAttrBytes) fail(field, too_long + ", found " + bytes_string(size));
    std::vector<char> buf(size + 1, '\0');
    h5_handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), size + 1);
    if (H5Aread(a.get(), mem.get(), buf.data()) < 0) fail(field, "cannot be read");
    return std::string(buf.data());
  }

  // After check_links, a name the schema has is present only as a hard link to a
  // dataset stored in the file.
  bool has_dataset(const std::string& path) const {
    const size_t slash = path.find('/', 1);
    if (slash != std::string::npos &&
        H5Lexists(file_.get(), path.substr(0, slash).c_str(), H5P_DEFAULT) <= 0)
      return false;
    return H5Lexists(file_.get(), path.c_str(), H5P_DEFAULT) > 0;
  }

  // Reads a float64 dataset of exactly `shape`, all values finite. The caller has
  // checked that the fixture's datasets fit in memory.
  tensor dataset(const std::string& path, const std::vector<int64_t>& shape) const {
    if (!has_dataset(path))
      fail(path, "is missing; this fixture needs it with shape " + shape_string(shape));
    h5_handle d(H5Dopen2(file_.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid()) fail(path, "is not a dataset");
    h5_handle type(H5Dget_type(d.get()), H5Tclose);
    const H5T_class_t c = H5Tget_class(type.get());
    const size_t size = H5Tget_size(type.get());
    if (c != H5T_FLOAT || size != 8) fail(path, "must be float64, found " + class_name(c, size));
    require_standard_layout(path, type.get(), c, "an IEEE float64 (H5T_IEEE_F64LE or F64BE)");
    h5_handle space(H5Dget_space(d.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) fail(path, "has an unreadable dataspace (corrupt file)");
    std::vector<hsize_t> dims(rank);
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
      fail(path, "has an unreadable dataspace (corrupt file)");
    const std::vector<hsize_t> want(shape.begin(), shape.end());
    if (rank != static_cast<int>(shape.size()))
      fail(path, "must have rank " + std::to_string(shape.size()) + " " + shape_string(shape) +
                     ", found rank " + std::to_string(rank) + " " + dims_string(dims));
    if (dims != want)
      fail(path, "must have shape " + shape_string(shape) + ", found " + dims_string(dims));
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

  // The number of entries of a packed batch's offsets (`path`, present): a 1-D dataset of
  // int32 or int64, signed or unsigned, in either byte order. Reads no data.
  hsize_t offsets_extent(const std::string& path) const {
    h5_handle d = open_offsets(path);
    h5_handle type(H5Dget_type(d.get()), H5Tclose);
    const H5T_class_t c = H5Tget_class(type.get());
    if (c != H5T_INTEGER)
      fail(path, "must be an integer dataset (int32 or int64), found " +
                     class_name(c, H5Tget_size(type.get())));
    if (!offsets_layout(type.get()))
      fail(path, "has a non-standard integer datatype, " + layout_string(type.get(), c) +
                     "; it must be " + kOffsetIntegers);
    h5_handle space(H5Dget_space(d.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) fail(path, "has an unreadable dataspace (corrupt file)");
    std::vector<hsize_t> dims(rank);
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
      fail(path, "has an unreadable dataspace (corrupt file)");
    if (rank != 1)
      fail(path, "must have rank 1 [N + 1], found rank " + std::to_string(rank) + " " +
                     dims_string(dims));
    return dims[0];
  }

  // The n offsets at `path`, once offsets_extent has checked their type and rank and the
  // caller their number.
  std::vector<int64_t> offsets(const std::string& path, hsize_t n) const {
    h5_handle d = open_offsets(path);
    h5_handle type(H5Dget_type(d.get()), H5Tclose);
    std::vector<int64_t> values(n);
    if (H5Tget_sign(type.get()) == H5T_SGN_NONE) {
      std::vector<uint64_t> raw(n);
      if (H5Dread(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0)
        fail(path, "cannot be read (truncated or corrupt file)");
      for (hsize_t i = 0; i < n; ++i) {
        if (raw[i] > static_cast<uint64_t>(INT64_MAX))
          fail(path, "element " + std::to_string(i) + " is " +
                         std::to_string(static_cast<unsigned long long>(raw[i])) +
                         "; an offset lies in [0, T]");
        values[i] = static_cast<int64_t>(raw[i]);
      }
    } else if (H5Dread(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) <
               0) {
      fail(path, "cannot be read (truncated or corrupt file)");
    }
    return values;
  }

  void require_absent(const std::string& path, const std::string& why) const {
    if (has_dataset(path)) fail(path, why);
  }

 private:
  // Checks that path_ is a regular file, without opening anything else for reading, and
  // returns the name to give HDF5: /proc/self/fd/N names the very file checked, so it
  // cannot be swapped for a FIFO between the check and H5Fopen.
  std::string open_regular_file() {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT || err == ENOTDIR) fail("(file)", "does not exist");
      fail("(file)", std::string("cannot be examined: ") + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) fail("(file)", not_a_regular_file(st.st_mode));
    // O_NONBLOCK: were it replaced by a FIFO meanwhile, the open must not wait for a writer.
    fd_.reset(::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (fd_.get() < 0) {
      const int err = errno;
      fail("(file)", std::string("cannot be opened: ") + std::strerror(err));
    }
    struct stat opened {};
    if (::fstat(fd_.get(), &opened) != 0) fail("(file)", "cannot be examined after opening");
    if (!S_ISREG(opened.st_mode)) fail("(file)", not_a_regular_file(opened.st_mode));
    const std::string by_fd = "/proc/self/fd/" + std::to_string(fd_.get());
    struct stat via {};
    if (::stat(by_fd.c_str(), &via) == 0 && via.st_dev == opened.st_dev &&
        via.st_ino == opened.st_ino)
      return by_fd;
    if (::stat(path_.c_str(), &via) != 0 || via.st_dev != opened.st_dev ||
        via.st_ino != opened.st_ino)
      fail("(file)", "was replaced while being opened");
    return path_;
  }

  // An object's header, read before the object is opened, must hold every message itself:
  // none shared through the file's SOHM table or another header. glabench and h5py never
  // write shared messages, and libhdf5 1.10 decodes one that claims a SOHM table the file
  // lacks by reading through a null pointer (fixture_reader_fuzzer).
  void check_unshared_header(hid_t loc, const char* name, const std::string& path) const {
    H5O_info_t info{};
    if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_HDR, H5P_DEFAULT) < 0)
      fail(path, "has an unreadable object header (corrupt file)");
    if (info.hdr.mesg.shared != 0)
      fail(path,
           "has shared object-header messages; a fixture's objects keep every message in "
           "their own header");
  }

  // Every link in the root, /inputs and /expected: a known name, a hard link, to a
  // group or to a dataset stored in the file itself.
  void check_links() const {
    check_unshared_header(file_.get(), "/", "/");
    h5_handle root(H5Gopen2(file_.get(), "/", H5P_DEFAULT), H5Gclose);
    if (!root.valid()) fail("(file)", "has no readable root group (corrupt file)");
    for (const auto& link : list_links(root.get(), "/")) {
      const std::string path = "/" + link.name;
      if (!contains(kRootNames, link.name))
        fail(printable(path),
             "is not part of the fixture schema; the root holds only the groups /inputs and "
             "/expected (datasets/README.md)");
      h5_handle group = open_hard_link(root.get(), path, link, H5I_GROUP);
      if (link.name == "inputs")
        check_group(group.get(), path, kInputNames, "q, k, v, g, u, h0, do, dht and cu_seqlens");
      else
        check_group(group.get(), path, kExpectedNames, "o, ht, lse, dq, dk, dv, dg, du and dh0");
    }
  }

  template <size_t N>
  void check_group(hid_t group, const std::string& group_path, const std::string_view (&names)[N],
                   const char* listed) const {
    for (const auto& link : list_links(group, group_path)) {
      const std::string path = group_path + "/" + link.name;
      if (!contains(names, link.name))
        fail(printable(path), "is not part of the fixture schema; " + group_path +
                                  " holds only the datasets " + listed +
                                  " (datasets/README.md; names are case-sensitive)");
      h5_handle d = open_hard_link(group, path, link, H5I_DATASET);
      check_storage(d.get(), path);
    }
  }

  std::vector<link_entry> list_links(hid_t group, const std::string& group_path) const {
    std::vector<link_entry> links;
    hsize_t index = 0;
    if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, collect_link, &links) < 0)
      fail(group_path, "cannot be listed (corrupt file)");
    return links;
  }

  // Opens the object a link names, once it is known to be a hard link to a `want`.
  h5_handle open_hard_link(hid_t group, const std::string& path, const link_entry& link,
                           H5I_type_t want) const {
    const std::string object = want == H5I_GROUP ? "group" : "dataset";
    const std::string only_hard =
        "; a fixture's groups and datasets must be hard links to objects in the fixture file";
    if (link.type == H5L_TYPE_SOFT)
      fail(path, "is a soft link" + link_target(group, link) + only_hard);
    if (link.type == H5L_TYPE_EXTERNAL)
      fail(path, "is an external link" + link_target(group, link) + only_hard);
    if (link.type != H5L_TYPE_HARD)
      fail(path, "is a user-defined link (class " + std::to_string(static_cast<int>(link.type)) +
                     ")" + only_hard);
    check_unshared_header(group, link.name.c_str(), path);
    h5_handle obj(H5Oopen(group, link.name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj.valid()) fail(path, "cannot be opened (corrupt file)");
    const H5I_type_t found = H5Iget_type(obj.get());
    if (found != want)
      fail(path, "must be a " + object + ", found " +
                     (found == H5I_GROUP      ? "a group"
                      : found == H5I_DATASET  ? "a dataset"
                      : found == H5I_DATATYPE ? "a named datatype"
                                              : "another kind of object"));
    return obj;
  }

  // " to 'TARGET'" for a soft or external link whose value is small enough to show.
  std::string link_target(hid_t group, const link_entry& link) const {
    if (link.value_size == 0 || link.value_size > 4096) return "";
    std::vector<char> value(link.value_size + 1, '\0');
    if (H5Lget_val(group, link.name.c_str(), value.data(), link.value_size, H5P_DEFAULT) < 0)
      return "";
    if (link.type == H5L_TYPE_SOFT) return " to '" + printable(value.data()) + "'";
    const char* file = nullptr;
    const char* object = nullptr;
    if (H5Lunpack_elink_val(value.data(), link.value_size, nullptr, &file, &object) < 0 || !file ||
        !object)
      return "";
    return " to '" + printable(file) + ":" + printable(object) + "'";
  }

  // Refuses data stored outside the fixture file: external raw-data files and virtual
  // datasets can name any file, a FIFO among them. A compact dataset (its data in its own
  // header) must hold all of it: libhdf5 1.10 reads a compact dataset that declares fewer
  // bytes than its shape needs from a null buffer (found by fixture_reader_fuzzer).
  void check_storage(hid_t d, const std::string& path) const {
    h5_handle dcpl(H5Dget_create_plist(d), H5Pclose);
    if (!dcpl.valid()) fail(path, "has unreadable storage properties (corrupt file)");
    const std::string rule = "; a fixture's data must be stored in the fixture file itself";
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL)
      fail(path, "is a virtual dataset (its data is drawn from other datasets)" + rule);
    if (layout == H5D_COMPACT) {
      h5_handle space(H5Dget_space(d), H5Sclose);
      h5_handle type(H5Dget_type(d), H5Tclose);
      const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
      const size_t size = type.valid() ? H5Tget_size(type.get()) : 0;
      if (n < 0 || size == 0) fail(path, "has an unreadable dataspace or datatype (corrupt file)");
      const hsize_t stored = H5Dget_storage_size(d);
      if (stored / size < hsize_t(n))
        fail(path, "is a compact dataset of " + std::to_string(n) + " elements of " +
                       std::to_string(size) + " bytes that stores " + std::to_string(stored) +
                       " bytes; it must store them all (corrupt file)");
    }
    const int external = H5Pget_external_count(dcpl.get());
    if (external < 0) fail(path, "has unreadable storage properties (corrupt file)");
    if (external > 0) {
      char name[1024] = {};
      off_t offset = 0;
      hsize_t size = 0;
      std::string where;
      if (H5Pget_external(dcpl.get(), 0, sizeof name - 1, name, &offset, &size) >= 0)
        where = " '" + printable(name) + "'";
      fail(path, "stores its data in the external file" + where + rule);
    }
  }

  // Refuses a number whose datatype is not a standard one (standard_layout) before it is
  // read; `allowed` says what the field may be.
  void require_standard_layout(const std::string& field, hid_t type, H5T_class_t c,
                               const char* allowed) const {
    if (standard_layout(type, c)) return;
    fail(field, std::string("has a non-standard ") + (c == H5T_INTEGER ? "integer" : "float") +
                    " datatype, " + layout_string(type, c) + "; it must be " + allowed);
  }

  h5_handle open_attr(const char* name, const std::string& field) const {
    if (!has_attr(name)) fail(field, "is missing from the root group");
    h5_handle a(H5Aopen(file_.get(), name, H5P_DEFAULT), H5Aclose);
    if (!a.valid()) fail(field, "cannot be opened (corrupt file)");
    // One value: an attribute of several read into one would overrun the buffer.
    h5_handle space(H5Aget_space(a.get()), H5Sclose);
    switch (H5Sget_simple_extent_type(space.get())) {
      case H5S_SCALAR:
        break;
      case H5S_SIMPLE: {
        const hssize_t n = H5Sget_simple_extent_npoints(space.get());
        if (n == 1) break;
        const int rank = H5Sget_simple_extent_ndims(space.get());
        std::vector<hsize_t> dims(rank > 0 ? rank : 0);
        if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
        fail(field, "must be a single value, found an array of " + std::to_string(n) +
                        " elements, shape " + dims_string(dims));
      }
      case H5S_NULL:
        fail(field, "must be a single value, found none (an empty dataspace)");
      default:
        fail(field, "has an unreadable dataspace (corrupt file)");
    }
    return a;
  }

  h5_handle open_offsets(const std::string& path) const {
    h5_handle d(H5Dopen2(file_.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid()) fail(path, "is not a dataset");
    return d;
  }

  std::string path_;
  file_descriptor fd_;  // held from the check until HDF5 has the file open
  h5_handle file_;
};

struct planned_dataset {
  const char* path;
  std::vector<int64_t> shape;
};

constexpr const char* kOffsetsPath = "/inputs/cu_seqlens";

// Every dataset the op can have, with the shape its attributes give it: `num_states`
// states (B, or N for a packed batch) and `offsets` entries of cu_seqlens (0: none).
std::vector<planned_dataset> op_datasets(const problem& p, int64_t num_states, int64_t offsets) {
  const std::vector<int64_t> state_shape = {num_states, p.H, p.K, p.V};
  std::vector<planned_dataset> out = {
      {"/inputs/q", p.qk_shape()},    {"/inputs/k", p.qk_shape()},  {"/inputs/v", p.v_shape()},
      {"/inputs/do", p.v_shape()},    {"/expected/o", p.v_shape()}, {"/expected/dq", p.qk_shape()},
      {"/expected/dk", p.qk_shape()}, {"/expected/dv", p.v_shape()}};
  if (p.has_gate()) {
    out.push_back({"/inputs/g", p.qk_shape()});
    out.push_back({"/expected/dg", p.qk_shape()});
  }
  if (p.has_bonus()) {
    out.push_back({"/inputs/u", p.u_shape()});
    out.push_back({"/expected/du", p.u_shape()});
  }
  if (p.has_state()) {
    for (const char* path : {"/inputs/h0", "/inputs/dht", "/expected/ht", "/expected/dh0"})
      out.push_back({path, state_shape});
  } else {
    out.push_back({"/expected/lse", p.lse_shape()});
  }
  if (offsets > 0) out.push_back({kOffsetsPath, {offsets}});  // read as int64: 8 bytes each
  return out;
}

// The bytes the fixture's datasets take in memory, overflow-checked, refused above the
// limit: computed from the attributes (and the extent of cu_seqlens, `offsets`, already
// bounded by T + 1) before any dataset is allocated.
void check_memory(const fixture_file& file, const problem& p, int64_t num_states, int64_t offsets,
                  uint64_t limit) {
  const std::string sizes = "B=" + std::to_string(p.B) + " T=" + std::to_string(p.T) +
                            " H=" + std::to_string(p.H) + " K=" + std::to_string(p.K) +
                            " V=" + std::to_string(p.V);
  uint64_t needed = 0;
  for (const auto& d : op_datasets(p, num_states, offsets)) {
    uint64_t bytes = sizeof(double);
    for (int64_t n : d.shape)
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(n), &bytes))
        file.fail("attributes B, T, H, K, V", "the size of " + std::string(d.path) + ", shape " +
                                                  shape_string(d.shape) +
                                                  " of float64, overflows 64 bits (" + sizes + ")");
    if (file.has_dataset(d.path) && __builtin_add_overflow(needed, bytes, &needed))
      file.fail("attributes B, T, H, K, V",
                "the total size of the datasets overflows 64 bits (" + sizes + ")");
  }
  if (needed > limit)
    file.fail("(file)", "needs " + bytes_string(needed) + " of memory for its datasets (" + sizes +
                            "), over the limit of " + bytes_string(limit) +
                            " (--max-fixture-bytes)");
}

}  // namespace

uint64_t default_max_fixture_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  uint64_t bytes = 0;
  if (pages <= 0 || page_size <= 0 ||
      __builtin_mul_overflow(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_size),
                             &bytes))
    return uint64_t{8} << 30;
  return bytes / 2;
}

std::string fixture::name() const {
  return std::filesystem::path(path).stem().string();
}

namespace {

fixture read_here(const std::string& path, const fixture_read_options& options) {
  silence_hdf5_errors();
  const fixture_file file(path);
  fixture f;
  f.path = path;

  const int64_t version = file.int_attr("glabench_fixture");
  if (version < kFirstFixtureSchemaVersion || version > kFixtureSchemaVersion)
    file.fail("attribute 'glabench_fixture'",
              "schema version " + std::to_string(version) +
                  " is not supported (this glabench reads versions 1 and 2)");
  const std::string op = file.string_attr("op");
  const auto kind = parse_op(op);
  if (!kind)
    file.fail("attribute 'op'",
              "unknown op '" + printable(op) + "' (expected gla, rwkv6 or softmax_attn)");
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

  // A packed batch (version 2): its extent first, bounded by T + 1, so that the memory
  // check can count its N states before anything is read.
  int64_t num_states = p.B, offsets = 0;
  if (file.has_dataset(kOffsetsPath)) {
    if (version < 2)
      file.fail(kOffsetsPath,
                "is not part of schema version 1; a packed variable-length batch needs "
                "glabench_fixture = 2");
    if (p.B != 1)
      file.fail(kOffsetsPath, "needs B = 1 (a packed batch is one row of sequences), found B = " +
                                  std::to_string(p.B));
    const hsize_t extent = file.offsets_extent(kOffsetsPath);
    if (extent < 2)
      file.fail(kOffsetsPath, "must hold N + 1 ≥ 2 offsets (N ≥ 1 sequences), found " +
                                  std::to_string(static_cast<unsigned long long>(extent)));
    if (extent - 1 > static_cast<uint64_t>(p.T))
      file.fail(kOffsetsPath, "holds " + std::to_string(static_cast<unsigned long long>(extent)) +
                                  " offsets, more than T + 1 = " +
                                  std::to_string(static_cast<unsigned long long>(p.T) + 1) +
                                  ": some sequence would have no token");
    offsets = static_cast<int64_t>(extent);
    num_states = offsets - 1;
  }
  check_memory(file, p, num_states, offsets, options.max_bytes);
  if (offsets > 0) {
    p.cu_seqlens = file.offsets(kOffsetsPath, static_cast<hsize_t>(offsets));
    const auto& cu = p.cu_seqlens;
    if (cu[0] != 0)
      file.fail(kOffsetsPath,
                "element 0 is " + std::to_string(cu[0]) + "; the offsets must start at 0");
    for (size_t n = 1; n < cu.size(); ++n)
      if (cu[n] <= cu[n - 1])
        file.fail(kOffsetsPath, "element " + std::to_string(n) + " is " + std::to_string(cu[n]) +
                                    ", not more than element " + std::to_string(n - 1) + " (" +
                                    std::to_string(cu[n - 1]) +
                                    "); the offsets must increase strictly (every sequence at "
                                    "least one token)");
    if (cu.back() != p.T)
      file.fail(kOffsetsPath, "the last element (" + std::to_string(cu.size() - 1) + ") is " +
                                  std::to_string(cu.back()) +
                                  "; it must be T = " + std::to_string(p.T));
  }

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

// How long reading a fixture in the child may take: a read of the largest fixture the
// memory limit lets through takes well under it.
constexpr double kContainedReadS = 600;
// The child's address space may grow by the datasets' limit and this much for libhdf5's
// own needs: a 220 KB file on which libhdf5 1.10 allocates without bound (found by
// fuzzing) took all of a 24 GB machine's memory before.
constexpr uint64_t kContainedSlackBytes = uint64_t{1} << 30;

}  // namespace

fixture read_fixture(const std::string& path, const fixture_read_options& options) {
  // libhdf5 crashes on some malformed files (a segmentation fault in its own code, found
  // by fuzzing), so the file is read in a child first (contained_run.hpp), its memory
  // bounded. The child's refusal is the answer: field and rule come back, and only a file
  // the child read whole is read here again.
  if (!options.in_child_first) return read_here(path, options);
  uint64_t room = 0;
  if (__builtin_add_overflow(options.max_bytes, kContainedSlackBytes, &room)) room = 0;
  const contained_outcome first = run_contained(
      [&]() -> std::string {
        try {
          (void)read_here(path, options);
        } catch (const fixture_error& e) {
          return e.field() + '\n' + e.rule();
        } catch (const std::bad_alloc&) {
          return "(file)\nneeds more memory to read than its datasets' limit (--max-fixture-bytes) "
                 "and " +
                 bytes_string(kContainedSlackBytes) + " for the HDF5 library allow: malformed";
        }
        return "";
      },
      kContainedReadS, room);
  if (!first.ended_normally)
    throw fixture_error(path, "(file)",
                        "is malformed in a way the HDF5 library cannot handle: read in a "
                        "separate process first, that process " +
                            first.how);
  if (const size_t cut = first.message.find('\n'); cut != std::string::npos)
    throw fixture_error(path, first.message.substr(0, cut), first.message.substr(cut + 1));
  return read_here(path, options);
}

}  // namespace glabench
