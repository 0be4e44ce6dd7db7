#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <system_error>
#include <vector>

#include "backend_loader.hpp"

using namespace glabench;
namespace fs = std::filesystem;

namespace {

std::string plugin(const std::string& variant) {
  return std::string(TEST_PLUGIN_DIR "/glabench_backend_test_") + variant + ".so";
}

void require_refused(const std::string& path, const std::string& fragment) {
  BOOST_TEST_CONTEXT(path) {
    try {
      load_backend(path);
      BOOST_FAIL("loaded a broken backend");
    } catch (const backend_load_error& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find(path) != std::string::npos, what);
      BOOST_TEST(what.find(fragment) != std::string::npos, what);
    }
  }
}

// A scratch folder holding a copy of the test_silent plugin, with the modes given
// (set with chmod, so the umask does not matter; CMake makes modules 0755).
struct plugin_copy {
  std::string dir, file;
  plugin_copy(const std::string& name, mode_t dir_mode, mode_t file_mode) {
    dir = SCRATCH_DIR "/permissions/" + name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    file = dir + "/glabench_backend_test_silent.so";
    fs::copy_file(plugin("silent"), file);
    BOOST_REQUIRE(::chmod(file.c_str(), file_mode) == 0);
    BOOST_REQUIRE(::chmod(dir.c_str(), dir_mode) == 0);
  }
  ~plugin_copy() {  // leaves no folder writable by others behind
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  plugin_copy(const plugin_copy&) = delete;
  plugin_copy& operator=(const plugin_copy&) = delete;
};

// Whether `gid` is `user`'s private group: its primary group with no other member.
bool is_private_group(gid_t gid, uid_t user) {
  const passwd* pw = getpwuid(user);
  if (!pw || pw->pw_gid != gid) return false;
  const std::string name = pw->pw_name;
  const group* gr = getgrgid(gid);
  if (!gr) return false;
  for (char** m = gr->gr_mem; *m; ++m)
    if (name != *m) return false;
  return true;
}

// A group this process may give its files that is not its private group: any group for
// root, else one of its supplementary groups.
std::optional<gid_t> shared_group() {
  if (geteuid() == 0) return 65534;  // nogroup, or no group at all: never root's private one
  std::vector<gid_t> groups(getgroups(0, nullptr));
  groups.resize(getgroups(static_cast<int>(groups.size()), groups.data()));
  for (gid_t g : groups)
    if (!is_private_group(g, geteuid())) return g;
  return std::nullopt;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(loader)

BOOST_AUTO_TEST_CASE(accepts_plugins_only_their_owner_can_change) {
  for (auto [dir_mode, file_mode] : {std::pair<mode_t, mode_t>{0755, 0755},
                                     {0700, 0500},
                                     {0755, 0644},
                                     {01777, 0755}}) {  // sticky, like /tmp
    const plugin_copy copy("accepted", dir_mode, file_mode);
    BOOST_TEST_CONTEXT(copy.file << " dir mode " << std::oct << dir_mode << " file mode "
                                 << file_mode) {
      BOOST_TEST(load_backend(copy.file).name() == "test_silent");
    }
  }
}

BOOST_AUTO_TEST_CASE(refuses_a_plugin_writable_by_others) {
  const plugin_copy copy("world_writable_file", 0755, 0757);
  require_refused(copy.file, "refusing to load: the file is writable by others (mode 0757)");
  require_refused(copy.file, "chmod o-w " + copy.file);
  require_refused(copy.file,
                  "backend files and their folders must be writable only by you or root");
}

BOOST_AUTO_TEST_CASE(refuses_a_plugin_writable_by_a_shared_group) {
  const plugin_copy copy("group_writable_file", 0755, 0775);
  struct stat st {};
  BOOST_REQUIRE(::stat(copy.file.c_str(), &st) == 0);
  if (is_private_group(st.st_gid, st.st_uid))  // what umask 002 gives: allowed
    BOOST_TEST(load_backend(copy.file).name() == "test_silent");
  const std::optional<gid_t> g = shared_group();
  if (!g) {
    BOOST_TEST_MESSAGE("no shared group to give the file; the refusal is not tested");
    return;
  }
  BOOST_REQUIRE(::chown(copy.file.c_str(), static_cast<uid_t>(-1), *g) == 0);
  BOOST_REQUIRE(::chmod(copy.file.c_str(), 0775) == 0);
  require_refused(copy.file, "refusing to load: the file is writable by group");
  require_refused(copy.file, "(mode 0775); chmod g-w " + copy.file);
  BOOST_REQUIRE(::chmod(copy.file.c_str(), 0755) == 0);
  BOOST_TEST(load_backend(copy.file).name() == "test_silent");
}

BOOST_AUTO_TEST_CASE(refuses_a_plugin_owned_by_another_user) {
  if (geteuid() != 0) {
    BOOST_TEST_MESSAGE("not root: cannot give a file away; not tested");
    return;
  }
  const plugin_copy copy("foreign_owner", 0755, 0755);
  BOOST_REQUIRE(::chown(copy.file.c_str(), 65534, 65534) == 0);
  require_refused(copy.file, "refusing to load: the file is owned by ");
  require_refused(copy.file, "65534), neither you (uid 0) nor root");
}

BOOST_AUTO_TEST_CASE(refuses_a_plugin_in_a_folder_others_can_write) {
  const plugin_copy copy("world_writable_folder", 0757, 0755);
  require_refused(copy.file, "refusing to load: its folder " + copy.dir +
                                 " is writable by others (mode 0757) and not sticky; chmod o-w " +
                                 copy.dir);
  // The folder of an explicit library counts too: an error, not a broken entry.
  BOOST_CHECK_THROW(discover_backends("", {copy.file}), backend_load_error);
}

BOOST_AUTO_TEST_CASE(lists_refused_files_and_folders_of_the_backend_path_as_broken) {
  const plugin_copy open_folder("path_open_folder", 0777, 0755);
  const plugin_copy open_file("path_open_file", 0755, 0757);
  const plugin_copy fine("path_fine", 0755, 0755);
  // Three copies of one backend: only the acceptable one may load, or the names clash.
  setenv("GLABENCH_BACKEND_PATH", (open_folder.dir + ":" + open_file.dir + ":" + fine.dir).c_str(),
         1);
  const backend_registry reg = discover_backends("", {});
  unsetenv("GLABENCH_BACKEND_PATH");
  BOOST_TEST(reg.backends.size() == 1u);
  BOOST_TEST(reg.find("test_silent") != nullptr);
  BOOST_TEST_REQUIRE(reg.broken.size() == 2u);
  BOOST_TEST(
      reg.broken[0].starts_with(open_folder.dir + ": refusing to search this backend folder: it is "
                                                  "writable by "),
      reg.broken[0]);
  BOOST_TEST(reg.broken[1].starts_with(open_file.file +
                                       ": refusing to load: the file is writable by others"),
             reg.broken[1]);
}

BOOST_AUTO_TEST_CASE(loads_the_naive_backend) {
  const loaded_backend b = load_backend(NAIVE_BACKEND_PATH);
  BOOST_TEST(b.name() == "naive_recurrent");
  BOOST_TEST(b.table->abi_major == GLABENCH_ABI_MAJOR);
  BOOST_TEST(b.table->num_capabilities == 16u);  // gla, rwkv6 × 4 dtypes × 2 modes
  // Its build, described by glabench_add_backend without a line in its source; built with
  // this test's flags, so optimised exactly when this file is.
  BOOST_TEST(b.build.described);
  BOOST_TEST(b.build.optimized == bool(GLABENCH_BUILD_INFO_OPTIMIZED));
  BOOST_TEST(b.build.build_type == BUILD_TYPE);
  BOOST_TEST(b.build.compiler == CXX_COMPILER);
  BOOST_TEST(b.build.cuda_architectures == "");
  BOOST_TEST(b.build.abi == "1.5");
  BOOST_TEST(b.knobs.empty());  // it reads no environment variable
}

BOOST_AUTO_TEST_CASE(reads_how_a_plugin_was_built) {
  // Built by glabench_add_backend with -O0 after the build type's flags: the compiler's
  // word wins over the build type's, and bench's warning names the backend and the fix.
  const loaded_backend slow = load_backend(plugin("unoptimised"));
  BOOST_TEST(slow.build.described);
  BOOST_TEST(!slow.build.optimized);
  BOOST_TEST(slow.build.unoptimised());
  BOOST_TEST(slow.build.build_type == BUILD_TYPE);
  BOOST_TEST(slow.build.summary().find("NOT OPTIMISED") != std::string::npos, slow.build.summary());
  const std::string warning = unoptimised_warning(slow.name(), slow.build);
  BOOST_TEST(warning.starts_with("backend 'test_unoptimised' was built WITHOUT OPTIMISATION"),
             warning);
  BOOST_TEST(warning.find("CMAKE_BUILD_TYPE=Release") != std::string::npos, warning);
  // glabench_add_backend also stamps the commit it was built from (backend.h's
  // GLABENCH_GIT_COMMIT_SYMBOL): 12 hex digits, "-dirty" after them when tracked files
  // differed, or "unknown" outside a git checkout.
  BOOST_TEST_REQUIRE(slow.build.git_commit.has_value());
  const std::string& commit = *slow.build.git_commit;
  BOOST_TEST((commit == "unknown" || std::regex_match(commit, std::regex("[0-9a-f]{12}(-dirty)?"))),
             commit);
  BOOST_TEST(slow.build.summary().ends_with(", git " + commit), slow.build.summary());

  // A plugin built against ABI 1.0 has no build member: it loads, and nothing is known.
  const loaded_backend old = load_backend(plugin("abi_1_0"));
  BOOST_TEST(!old.build.described);
  BOOST_TEST(!old.build.unoptimised());
  BOOST_TEST(old.build.abi == "1.0");
  BOOST_TEST(old.build.summary() == "not described (ABI 1.0)");
  BOOST_TEST(!old.build.git_commit);  // a table of its own: no commit symbol
  BOOST_TEST(unoptimised_warning(old.name(), old.build).empty());

  // C: GLABENCH_BUILD_INFO_INIT describes the build from the compiler alone (not built by
  // glabench_add_backend: no build type); a table that leaves it out is not described.
  const loaded_backend c = load_backend(plugin("c_described"));
  BOOST_TEST(c.build.described);
  BOOST_TEST(c.build.optimized == bool(GLABENCH_BUILD_INFO_OPTIMIZED));
  BOOST_TEST((c.build.compiler.starts_with("GNU ") || c.build.compiler.starts_with("Clang ")),
             c.build.compiler);
  BOOST_TEST(c.build.build_type == "");
  const loaded_backend c_none = load_backend(plugin("c_undescribed"));
  BOOST_TEST(!c_none.build.described);
  BOOST_TEST(c_none.build.abi == "1.5");
  // A C table ending with GLABENCH_BUILD_INFO_INIT, or before it, leaves the optional
  // members of ABI 1.2 to 1.5 zero: nothing to call, no knobs, no features.
  for (const loaded_backend* t : {&c, &c_none}) {
    BOOST_TEST(t->table->struct_size == sizeof(glabench_backend));
    BOOST_TEST(!t->table->prepare);
    BOOST_TEST(!t->table->release);
    BOOST_TEST(!t->table->last_call_report);
    BOOST_TEST(!t->table->collect);
    BOOST_TEST(t->knobs.empty());
    BOOST_TEST(t->features() == 0u);
  }
  // A plugin built against ABI 1.1 ends at build: it loads, described.
  const loaded_backend v11 = load_backend(plugin("abi_1_1"));
  BOOST_TEST(v11.build.described);
  BOOST_TEST(v11.build.abi == "1.1");
  BOOST_TEST(v11.table->struct_size == offsetof(glabench_backend, prepare));
  BOOST_TEST(!GLABENCH_HAS_MEMBER(v11.table, glabench_backend, prepare));
  // One built against ABI 1.2 ends at last_call_report.
  const loaded_backend v12 = load_backend(plugin("abi_1_2"));
  BOOST_TEST(v12.build.abi == "1.2");
  BOOST_TEST(GLABENCH_HAS_MEMBER(v12.table, glabench_backend, last_call_report));
  BOOST_TEST(!GLABENCH_HAS_MEMBER(v12.table, glabench_backend, collect));

  // Carried from a worker to the parent as JSON, unchanged.
  for (const loaded_backend* b : {&slow, &old, &c}) {
    const backend_build back = backend_build_from_json(to_json(b->build));
    BOOST_TEST(to_json(back) == to_json(b->build));
    BOOST_TEST(back.summary() == b->build.summary());
  }
  const nlohmann::json builds = backend_builds({&slow, &old});
  BOOST_TEST(builds["test_unoptimised"]["optimized"] == false);
  BOOST_TEST(
      builds["test_abi_1_0"] ==
      nlohmann::json({{"described", false}, {"abi", "1.0"}, {"version", old.table->version}}));
  BOOST_TEST(builds["test_unoptimised"]["version"] == slow.table->version);
}

BOOST_AUTO_TEST_CASE(refuses_broken_plugins) {
  require_refused(plugin("no_entry"), "no entry symbol 'glabench_backend_entry'");
  require_refused(plugin("null_entry"), "returned NULL");
  require_refused(plugin("abi_major"),
                  "ABI major version 99, but this glabench speaks ABI major 1");
  require_refused(plugin("short_table"), "shorter than");
  require_refused(plugin("short_1_1"), "bytes ABI 1.1 promises");
  require_refused(plugin("short_1_2"), "bytes ABI 1.2 promises");
  require_refused(plugin("null_forward"), "leaves a required function");
  // A capability is an op and a mode of ABI 1: an unknown one would be listed and matched
  // as if it were gla or bwd.
  require_refused(
      plugin("unknown_op"),
      "backend 'test_unknown_op' capability 1 has op 7, not one of GLABENCH_OP_GLA (0), "
      "GLABENCH_OP_RWKV6 (1), GLABENCH_OP_SOFTMAX_ATTN (2)");
  require_refused(plugin("unknown_mode"),
                  "backend 'test_unknown_mode' capability 0 has mode 5, not one of "
                  "GLABENCH_MODE_FORWARD (0), GLABENCH_MODE_BACKWARD (1)");
  // Results record a backend's knobs: it may name only variables named after it.
  require_refused(plugin("foreign_knob"),
                  "backend 'test_foreign_knob' knob 1 'HF_TOKEN' is not TEST_FOREIGN_KNOB_… (a "
                  "knob is named after its backend");
}

// The knobs a table names (ABI 1.4) are the backend's; a table of an earlier minor has none.
BOOST_AUTO_TEST_CASE(reads_the_knobs_a_table_names) {
  BOOST_TEST(load_backend(plugin("aws")).knobs == std::vector<std::string>{"AWS_TEST_TILE"});
  BOOST_TEST(load_backend(plugin("abi_1_2")).knobs.empty());
  BOOST_TEST(load_backend(plugin("silent")).knobs.empty());
}

BOOST_AUTO_TEST_CASE(refuses_files_that_are_not_libraries) {
  const std::string text = SCRATCH_DIR "/glabench_backend_text.so";
  fs::create_directories(SCRATCH_DIR);
  std::ofstream(text) << "not a library\n";
  require_refused(text, "not a shared library");
  const std::string fake_elf = SCRATCH_DIR "/glabench_backend_fake_elf.so";
  std::ofstream(fake_elf) << "\x7f"
                             "ELF but nothing else";
  require_refused(fake_elf, "cannot be loaded");
  require_refused(SCRATCH_DIR "/missing.so", "no such file");
}

BOOST_AUTO_TEST_CASE(refuses_two_backends_with_one_name) {
  try {
    discover_backends(std::string(NAIVE_BACKEND_DIR), {plugin("duplicate")});
    BOOST_FAIL("accepted two backends named naive_recurrent");
  } catch (const backend_load_error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("two backends are named 'naive_recurrent'") != std::string::npos, what);
    BOOST_TEST(what.find(plugin("duplicate")) != std::string::npos, what);
  }
}

BOOST_AUTO_TEST_CASE(searches_the_backend_path_and_reports_broken_files) {
  // TEST_PLUGIN_DIR holds the broken variants: found through GLABENCH_BACKEND_PATH,
  // listed as broken, never fatal (only explicit --backend-lib failures are).
  setenv("GLABENCH_BACKEND_PATH", "/nonexistent:" TEST_PLUGIN_DIR, 1);
  const backend_registry reg = discover_backends("", {});
  unsetenv("GLABENCH_BACKEND_PATH");
  BOOST_TEST(reg.find("test_silent") != nullptr);
  BOOST_TEST(reg.find("naive_recurrent") != nullptr);  // the duplicate variant, alone here
  BOOST_TEST(reg.broken.size() == 10u);
  BOOST_CHECK_THROW(discover_backends("", {plugin("abi_major")}), backend_load_error);
}

BOOST_AUTO_TEST_CASE(recognises_backend_file_names) {
  BOOST_TEST(looks_like_backend_file("glabench_backend_naive_recurrent.so"));
  BOOST_TEST(!looks_like_backend_file("libfoo.so"));
  BOOST_TEST(!looks_like_backend_file("glabench_backend_x.so.txt"));
}

BOOST_AUTO_TEST_SUITE_END()
