#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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

}  // namespace

BOOST_AUTO_TEST_SUITE(loader)

BOOST_AUTO_TEST_CASE(loads_the_naive_backend) {
  const loaded_backend b = load_backend(NAIVE_BACKEND_PATH);
  BOOST_TEST(b.name() == "naive_recurrent");
  BOOST_TEST(b.table->abi_major == GLABENCH_ABI_MAJOR);
  BOOST_TEST(b.table->num_capabilities == 8u);
}

BOOST_AUTO_TEST_CASE(refuses_broken_plugins) {
  require_refused(plugin("no_entry"), "no entry symbol 'glabench_backend_entry'");
  require_refused(plugin("null_entry"), "returned NULL");
  require_refused(plugin("abi_major"),
                  "ABI major version 99, but this glabench speaks ABI major 1");
  require_refused(plugin("short_table"), "shorter than");
  require_refused(plugin("null_forward"), "leaves a required function");
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
  BOOST_TEST(reg.broken.size() == 5u);
  BOOST_CHECK_THROW(discover_backends("", {plugin("abi_major")}), backend_load_error);
}

BOOST_AUTO_TEST_CASE(recognises_backend_file_names) {
  BOOST_TEST(looks_like_backend_file("glabench_backend_naive_recurrent.so"));
  BOOST_TEST(!looks_like_backend_file("libfoo.so"));
  BOOST_TEST(!looks_like_backend_file("glabench_backend_x.so.txt"));
}

BOOST_AUTO_TEST_SUITE_END()
