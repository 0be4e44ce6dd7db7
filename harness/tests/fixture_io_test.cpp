#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "bad_fixtures.hpp"
#include "fixture.hpp"
#include "fixture_catalog.hpp"
#include "hdf5_handle.hpp"

using namespace glabench;
namespace fs = std::filesystem;

namespace {

void require_same(const std::string& what, const tensor& a, const tensor& b) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_TEST(a.shape == b.shape, boost::test_tools::per_element());
    BOOST_TEST(a.data == b.data, boost::test_tools::per_element());
  }
}

void require_same_fixture(const fixture& a, const fixture& b) {
  BOOST_TEST(op_name(a.prob.op) == op_name(b.prob.op));
  BOOST_TEST((a.prob.B == b.prob.B && a.prob.T == b.prob.T && a.prob.H == b.prob.H &&
              a.prob.K == b.prob.K && a.prob.V == b.prob.V && a.prob.causal == b.prob.causal));
  BOOST_TEST(a.prob.scale == b.prob.scale);
  BOOST_TEST(a.prob.cu_seqlens == b.prob.cu_seqlens, boost::test_tools::per_element());
  BOOST_TEST(a.description == b.description);
  require_same("q", a.inputs.q, b.inputs.q);
  require_same("k", a.inputs.k, b.inputs.k);
  require_same("v", a.inputs.v, b.inputs.v);
  require_same("g", a.inputs.g, b.inputs.g);
  require_same("u", a.inputs.u, b.inputs.u);
  BOOST_TEST(a.inputs.h0.has_value() == b.inputs.h0.has_value());
  if (a.inputs.h0) require_same("h0", *a.inputs.h0, *b.inputs.h0);
  BOOST_TEST(a.inputs.d_o.has_value() == b.inputs.d_o.has_value());
  if (a.inputs.d_o) require_same("do", *a.inputs.d_o, *b.inputs.d_o);
  BOOST_TEST(a.inputs.dht.has_value() == b.inputs.dht.has_value());
  if (a.inputs.dht) require_same("dht", *a.inputs.dht, *b.inputs.dht);
  require_same("o", a.expected.o, b.expected.o);
  require_same("ht", a.expected.ht, b.expected.ht);
  require_same("lse", a.expected.lse, b.expected.lse);
  BOOST_TEST(a.expected_grads.has_value() == b.expected_grads.has_value());
  if (a.expected_grads) {
    const op_gradients &x = *a.expected_grads, &y = *b.expected_grads;
    require_same("dq", x.dq, y.dq);
    require_same("dk", x.dk, y.dk);
    require_same("dv", x.dv, y.dv);
    require_same("dg", x.dg, y.dg);
    require_same("du", x.du, y.du);
    require_same("dh0", x.dh0, y.dh0);
  }
}

const std::string kScratch = SCRATCH_DIR "/fixture_io";

// The error read_fixture refuses `path` with (a test failure if it reads it).
fixture_error refusal(const std::string& path, const fixture_read_options& options = {}) {
  try {
    read_fixture(path, options);
  } catch (const fixture_error& e) {
    return e;
  }
  BOOST_FAIL("read " + path + " instead of refusing it");
  throw std::logic_error("unreachable");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fixture_io)

BOOST_AUTO_TEST_CASE(round_trip_every_recipe) {
  fs::create_directories(kScratch);
  for (const auto& recipe : fixture_recipes("small")) {
    BOOST_TEST_CONTEXT(recipe.name) {
      fixture f = make_fixture(recipe);
      f.path = kScratch + "/" + recipe.name + ".h5";
      write_fixture(f.path, f);
      require_same_fixture(read_fixture(f.path), f);
    }
  }
}

// A packed batch (cu_seqlens, schema version 2) of every op, softmax_attn causal or not.
BOOST_AUTO_TEST_CASE(round_trip_packed_batches) {
  fs::create_directories(kScratch);
  for (auto [op, causal] :
       {std::pair{op_kind::gla, true}, std::pair{op_kind::rwkv6, true},
        std::pair{op_kind::softmax_attn, true}, std::pair{op_kind::softmax_attn, false}}) {
    BOOST_TEST_CONTEXT(op_name(op) << " causal " << causal) {
      fixture f = testing::packed_fixture(op, causal);
      f.path = kScratch + "/packed_" + std::string(op_name(op)) + ".h5";
      write_fixture(f.path, f);
      const fixture read = read_fixture(f.path);
      require_same_fixture(read, f);
      BOOST_TEST(read.prob.num_states() == 3);
    }
  }
}

// The committed set is exactly what `glabench fixtures make` writes today: the
// generator is deterministic and the committed files are not stale.
BOOST_AUTO_TEST_CASE(committed_fixtures_are_reproducible) {
  int checked = 0;
  for (const auto& recipe : fixture_recipes("small")) {
    BOOST_TEST_CONTEXT(recipe.name) {
      const std::string path = std::string(FIXTURE_DIR "/") + recipe.name + ".h5";
      BOOST_REQUIRE(fs::exists(path));
      fixture made = make_fixture(recipe);
      made.path = path;
      require_same_fixture(read_fixture(path), made);
      ++checked;
    }
  }
  BOOST_TEST(checked == 45);
}

// The K = V = 256 fixtures are 0.6 MB each (their fp64 state ht alone is 512 KiB); the
// rest stay under 2.5 MB together (3.57 MB in all with the chunk-size ones), and the five
// packed batches of 542 tokens (K and V 4 or 8) are 0.22-0.37 MB each.
BOOST_AUTO_TEST_CASE(committed_set_is_small) {
  uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(FIXTURE_DIR)) {
    bytes += e.file_size();
    BOOST_TEST_CONTEXT(e.path()) {
      BOOST_TEST(e.file_size() < 700u * 1024);
    }
  }
  BOOST_TEST(bytes < 11u * 512 * 1024);  // 5.5 MiB
}

// Schema version 1 for a fixture without cu_seqlens, so that readers of version 1 read
// it (the committed files among them); version 2 for a packed batch.
BOOST_AUTO_TEST_CASE(the_schema_version_is_the_one_the_fixture_needs) {
  fs::create_directories(kScratch);
  for (const fixture& made :
       {make_fixture(fixture_recipes("small").front()), testing::packed_fixture(op_kind::gla),
        testing::packed_fixture(op_kind::softmax_attn)}) {
    fixture f = made;
    BOOST_TEST_CONTEXT(op_name(f.prob.op) << " varlen " << f.prob.varlen()) {
      f.path = kScratch + "/version.h5";
      write_fixture(f.path, f);
      h5_handle file(H5Fopen(f.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
      h5_handle a(H5Aopen(file.get(), "glabench_fixture", H5P_DEFAULT), H5Aclose);
      int64_t version = 0;
      BOOST_REQUIRE(H5Aread(a.get(), H5T_NATIVE_INT64, &version) >= 0);
      BOOST_TEST(version == (f.prob.varlen() ? 2 : 1));
      BOOST_TEST(H5Lexists(file.get(), "/inputs/cu_seqlens", H5P_DEFAULT) ==
                 (f.prob.varlen() ? 1 : 0));
    }
  }
}

// The committed packed batches: nine sequences of 1 to 300 tokens, a state each.
BOOST_AUTO_TEST_CASE(the_committed_packed_batches_hold_nine_sequences) {
  const std::vector<int64_t> cu = {0, 1, 18, 82, 97, 397, 462, 478, 541, 542};
  for (const char* name : {"gla_varlen", "rwkv6_varlen", "gla_varlen_strong_gates",
                           "softmax_attn_varlen", "softmax_attn_varlen_noncausal"}) {
    BOOST_TEST_CONTEXT(name) {
      const fixture f = read_fixture(std::string(FIXTURE_DIR "/") + name + ".h5");
      BOOST_TEST(f.prob.cu_seqlens == cu, boost::test_tools::per_element());
      BOOST_TEST(f.has_gradients());
      if (f.prob.has_state()) {
        const std::vector<int64_t> states = {9, f.prob.H, f.prob.K, f.prob.V};
        BOOST_TEST(f.inputs.h0->shape == states, boost::test_tools::per_element());
        BOOST_TEST(f.expected.ht.shape == states, boost::test_tools::per_element());
        BOOST_TEST(f.expected_grads->dh0.shape == states, boost::test_tools::per_element());
      }
    }
  }
}

// cu_seqlens of int32 or int64, signed or unsigned, in either byte order, as numpy and
// torch write them.
BOOST_AUTO_TEST_CASE(offsets_of_every_allowed_integer_type_are_read) {
  fs::create_directories(kScratch);
  fixture f = testing::packed_fixture(op_kind::rwkv6);
  f.path = kScratch + "/offset_types.h5";
  for (hid_t type : {H5T_STD_I32LE, H5T_STD_I32BE, H5T_STD_U32LE, H5T_STD_U32BE, H5T_STD_I64BE,
                     H5T_STD_U64LE, H5T_STD_U64BE}) {
    write_fixture(f.path, f);
    {
      h5_handle file(H5Fopen(f.path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
      BOOST_REQUIRE(H5Ldelete(file.get(), "/inputs/cu_seqlens", H5P_DEFAULT) >= 0);
      const hsize_t n = f.prob.cu_seqlens.size();
      h5_handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
      h5_handle d(H5Dcreate2(file.get(), "/inputs/cu_seqlens", type, space.get(), H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT),
                  H5Dclose);
      BOOST_REQUIRE(H5Dwrite(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                             f.prob.cu_seqlens.data()) >= 0);
    }
    require_same_fixture(read_fixture(f.path), f);
  }
}

// A packed batch's offsets count in the memory a fixture needs, 8 bytes each, and so do
// its N states.
BOOST_AUTO_TEST_CASE(the_memory_of_a_packed_batch_counts_its_states_and_offsets) {
  fs::create_directories(kScratch);
  fixture f = testing::packed_fixture(op_kind::gla);
  f.path = kScratch + "/packed_memory.h5";
  write_fixture(f.path, f);
  // B1 T6 H2 K4 V4: six [1,T,H,K] and four [1,T,H,V] datasets of 48 values, four states
  // [3,H,K,V] of 96, and 4 offsets.
  const uint64_t needed = (10 * 48 + 4 * 96 + 4) * sizeof(double);
  fixture_read_options options;
  options.max_bytes = needed;
  BOOST_TEST(read_fixture(f.path, options).prob.num_states() == 3);
  options.max_bytes = needed - 1;
  const fixture_error e = refusal(f.path, options);
  BOOST_TEST(e.field() == "(file)");
  BOOST_TEST(e.rule().find("needs " + std::to_string(needed) + " bytes") != std::string::npos,
             e.rule());
}

// Some of them point at a FIFO: were one opened, the test would block, so it has a time limit.
BOOST_AUTO_TEST_CASE(every_validation_rule_names_file_field_and_rule,
                     *boost::unit_test::timeout(120)) {
  const auto bad = testing::write_bad_fixtures(SCRATCH_DIR "/bad_fixtures");
  BOOST_TEST(bad.size() >= 14u);
  BOOST_TEST(bad.size() >= 38u);  // with the hostile ones (links, FIFOs, sizes, attributes, types)
  for (const auto& b : bad) {
    BOOST_TEST_CONTEXT(b.path) {
      try {
        read_fixture(b.path);
        BOOST_FAIL("accepted a malformed fixture");
      } catch (const fixture_error& e) {
        BOOST_TEST(e.file() == b.path);
        BOOST_TEST(e.field() == b.field);
        BOOST_TEST(e.rule().find(b.rule_fragment) != std::string::npos, "rule: " << e.rule());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_missing_file_is_an_error) {
  BOOST_CHECK_THROW(read_fixture(SCRATCH_DIR "/does_not_exist.h5"), fixture_error);
  const fixture_error e = refusal(SCRATCH_DIR "/does_not_exist.h5");
  BOOST_TEST(e.field() == "(file)");
  BOOST_TEST(e.rule() == "does not exist");
}

// A 5.5 KB file, found by fuzzing, on which libhdf5 1.10 (Debian 12) itself segfaults while
// listing a group's links: refused, whether this libhdf5 crashes on it (read in a child
// first) or catches it.
BOOST_AUTO_TEST_CASE(a_file_that_crashes_libhdf5_is_refused) {
  const std::string path = HOSTILE_FIXTURE_DIR "/libhdf5_segfault.h5";
  const fixture_error e = refusal(path);
  BOOST_TEST(e.file() == path);
  BOOST_TEST_MESSAGE(e.what());
}

// gla_basic: B2 T16 H2 K8 V8 with h0, do and dht, so six [B,T,H,K] datasets (q, k, g, dq,
// dk, dg), four [B,T,H,V] (v, do, o, dv) and four [B,H,K,V] (h0, dht, ht, dh0).
BOOST_AUTO_TEST_CASE(the_memory_a_fixture_needs_is_checked_against_the_limit) {
  const std::string path = FIXTURE_DIR "/gla_basic.h5";
  const uint64_t needed = (6 * 512 + 4 * 512 + 4 * 256) * sizeof(double);
  fixture_read_options options;
  options.max_bytes = needed;
  BOOST_TEST(read_fixture(path, options).prob.T == 16);
  options.max_bytes = needed - 1;
  const fixture_error e = refusal(path, options);
  BOOST_TEST(e.file() == path);
  BOOST_TEST(e.field() == "(file)");
  BOOST_TEST(e.rule().find("needs 49152 bytes (48.0 KiB)") != std::string::npos, e.rule());
  BOOST_TEST(e.rule().find("over the limit of 49151 bytes") != std::string::npos, e.rule());
  BOOST_TEST(e.rule().find("(--max-fixture-bytes)") != std::string::npos, e.rule());
}

BOOST_AUTO_TEST_CASE(the_default_memory_limit_is_half_the_physical_memory) {
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                            static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  BOOST_TEST(default_max_fixture_bytes() == physical / 2);
  BOOST_TEST(fixture_read_options{}.max_bytes == physical / 2);
}

// FIFOs, devices, sockets and folders are refused from their kind alone, never opened:
// opening a FIFO for reading blocks until a writer comes. The time limit turns a hang
// into a failure.
BOOST_AUTO_TEST_CASE(only_regular_files_are_opened, *boost::unit_test::timeout(60)) {
  const fs::path dir = SCRATCH_DIR "/special_files";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto require_refused = [](const std::string& path, const std::string& kind) {
    BOOST_TEST_CONTEXT(path) {
      const fixture_error e = refusal(path);
      BOOST_TEST(e.file() == path);
      BOOST_TEST(e.field() == "(file)");
      BOOST_TEST(e.rule() ==
                 "is " + kind + ", not a regular file; fixtures are read only from regular files");
    }
  };

  const std::string fifo = (dir / "pipe.h5").string();
  BOOST_REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  require_refused(fifo, "a FIFO (named pipe)");
  // Nobody has it open for reading: a writer that does not wait finds no reader.
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  BOOST_TEST((writer < 0 && errno == ENXIO));
  if (writer >= 0) ::close(writer);

  const std::string link_to_fifo = (dir / "link_to_pipe.h5").string();
  fs::create_symlink(fifo, link_to_fifo);
  require_refused(link_to_fifo, "a FIFO (named pipe)");

  require_refused(dir.string(), "a folder");
  if (fs::exists("/dev/null")) require_refused("/dev/null", "a character device");

  // A socket path must be short (sun_path), so it goes in a fresh folder under /tmp.
  char socket_dir[] = "/tmp/glabench_sock_XXXXXX";
  BOOST_REQUIRE(mkdtemp(socket_dir) != nullptr);
  const std::string socket_path = std::string(socket_dir) + "/s.h5";
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  BOOST_REQUIRE(sock >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  BOOST_REQUIRE(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  require_refused(socket_path, "a socket");
  ::close(sock);
  fs::remove_all(socket_dir);

  // A symbolic link to a regular file is followed.
  const std::string link_to_fixture = (dir / "link.h5").string();
  fs::create_symlink(FIXTURE_DIR "/gla_t1.h5", link_to_fixture);
  BOOST_TEST(read_fixture(link_to_fixture).prob.T == 1);
}

// A second name for a dataset (a plain hard link) is a dataset of the file like any other.
BOOST_AUTO_TEST_CASE(a_hard_link_to_a_dataset_is_read) {
  fs::create_directories(kScratch);
  fixture f = make_fixture(fixture_recipes("small").front());
  f.path = kScratch + "/hard_link.h5";
  write_fixture(f.path, f);
  {
    h5_handle file(H5Fopen(f.path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    BOOST_REQUIRE(file.valid());
    BOOST_REQUIRE(H5Ldelete(file.get(), "/inputs/k", H5P_DEFAULT) >= 0);
    BOOST_REQUIRE(H5Lcreate_hard(file.get(), "/inputs/q", file.get(), "/inputs/k", H5P_DEFAULT,
                                 H5P_DEFAULT) >= 0);
  }
  const fixture read = read_fixture(f.path);
  require_same("k is q", read.inputs.k, f.inputs.q);
}

// Numbers of every standard type are read, whatever their width and byte order, float16
// made as h5py makes it among them: only non-standard layouts are refused (the
// non-standard ones are in bad_fixtures.cpp).
BOOST_AUTO_TEST_CASE(numbers_of_every_standard_type_are_read) {
  fs::create_directories(kScratch);
  fixture f = make_fixture(fixture_recipes("small").front());
  f.path = kScratch + "/standard_types.h5";
  write_fixture(f.path, f);
  h5_handle f16(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);  // h5py's IEEE_F16LE, then big-endian
  H5Tset_fields(f16.get(), 15, 10, 5, 0, 10);
  H5Tset_size(f16.get(), 2);
  H5Tset_ebias(f16.get(), 15);
  H5Tset_order(f16.get(), H5T_ORDER_BE);
  {
    h5_handle file(H5Fopen(f.path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    BOOST_REQUIRE(file.valid());
    auto attr = [&](const char* name, hid_t type, double value) {
      H5Adelete(file.get(), name);
      h5_handle space(H5Screate(H5S_SCALAR), H5Sclose);
      h5_handle a(H5Acreate2(file.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                  H5Aclose);
      BOOST_REQUIRE(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value) >= 0);
    };
    attr("glabench_fixture", H5T_STD_I8BE, 1);
    attr("B", H5T_STD_U8BE, double(f.prob.B));
    attr("T", H5T_STD_I16LE, double(f.prob.T));
    attr("H", H5T_STD_U32LE, double(f.prob.H));
    attr("K", H5T_STD_I64BE, double(f.prob.K));
    attr("V", H5T_STD_U64BE, double(f.prob.V));
    attr("scale", f16.get(), 0.375);
    BOOST_REQUIRE(H5Ldelete(file.get(), "/inputs/q", H5P_DEFAULT) >= 0);
    const hsize_t dims[] = {hsize_t(f.prob.B), hsize_t(f.prob.T), hsize_t(f.prob.H),
                            hsize_t(f.prob.K)};
    h5_handle space(H5Screate_simple(4, dims, nullptr), H5Sclose);
    h5_handle d(H5Dcreate2(file.get(), "/inputs/q", H5T_IEEE_F64BE, space.get(), H5P_DEFAULT,
                           H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose);
    BOOST_REQUIRE(
        H5Dwrite(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, f.inputs.q.ptr()) >= 0);
  }
  const fixture read = read_fixture(f.path);
  BOOST_TEST((read.prob.B == f.prob.B && read.prob.T == f.prob.T && read.prob.H == f.prob.H &&
              read.prob.K == f.prob.K && read.prob.V == f.prob.V));
  BOOST_TEST(read.prob.scale == 0.375);
  require_same("q as big-endian float64", read.inputs.q, f.inputs.q);
}

BOOST_AUTO_TEST_CASE(a_failed_write_leaves_nothing) {
  fixture f = make_fixture(fixture_recipes("small").front());
  const std::string path = SCRATCH_DIR "/no_such_folder/x.h5";
  BOOST_CHECK_THROW(write_fixture(path, f), std::exception);
  BOOST_TEST(!fs::exists(path));
}

BOOST_AUTO_TEST_SUITE_END()
