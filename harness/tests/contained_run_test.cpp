// run_contained (contained_run.hpp): work that returns or throws ends normally, in a child
// (its effects stay there); a crash, an exit or a hang is reported with how the child ended,
// and a hang is killed at the limit.
#include "contained_run.hpp"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using glabench::run_contained;

BOOST_AUTO_TEST_SUITE(contained_run)

BOOST_AUTO_TEST_CASE(work_that_returns_or_throws_ends_normally_in_a_child) {
  int touched = 0;
  auto r = run_contained(
      [&] {
        touched = 1;
        return std::string();
      },
      30);
  BOOST_TEST(r.ended_normally, r.how);
  BOOST_TEST(touched == 0);  // the child's copy was written
  r = run_contained([]() -> std::string { throw std::runtime_error("thrown"); }, 30);
  BOOST_TEST(r.ended_normally, r.how);
  BOOST_TEST(r.message.empty());
}

BOOST_AUTO_TEST_CASE(what_the_work_returns_comes_back) {
  const std::string long_text(100000, 'x');  // more than a pipe holds, cut at 64 KiB
  auto r = run_contained([] { return std::string("field\nrule"); }, 30);
  BOOST_TEST(r.ended_normally, r.how);
  BOOST_TEST(r.message == "field\nrule");
  r = run_contained([&] { return long_text; }, 30);
  BOOST_TEST(r.ended_normally, r.how);
  BOOST_TEST(r.message == long_text.substr(0, 64 << 10));
}

// AddressSanitizer reserves its heap up front, where RLIMIT_AS does not reach it.
#if defined(__SANITIZE_ADDRESS__)
#define GLABENCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLABENCH_ASAN 1
#endif
#endif
#ifndef GLABENCH_ASAN
BOOST_AUTO_TEST_CASE(the_childs_memory_is_bounded) {
  // 4 GiB, written, against room for 256 MiB more: the allocation fails in the child (a
  // bad_alloc, or under a sanitizer its report and exit), never "allocated".
  const auto r = run_contained(
      [] {
        std::vector<char> v(size_t{4} << 30, 1);
        return std::string(v.empty() ? "" : "allocated");
      },
      60, uint64_t{256} << 20);
  BOOST_TEST(r.message.empty(), r.how);
}
#endif

BOOST_AUTO_TEST_CASE(a_crash_or_an_exit_is_reported) {
  auto r = run_contained(
      []() -> std::string {
        std::raise(SIGSEGV);
        return "";
      },
      30);
  BOOST_TEST(!r.ended_normally);
  BOOST_TEST(r.how.find("was killed by signal 11") != std::string::npos, r.how);
  r = run_contained([]() -> std::string { _exit(3); }, 30);
  BOOST_TEST(!r.ended_normally);
  BOOST_TEST(r.how == "exited with code 3");
}

BOOST_AUTO_TEST_CASE(a_hang_is_killed_at_the_limit) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_contained(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(60));
        return std::string();
      },
      0.5);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(!r.ended_normally);
  BOOST_TEST(r.how == "did not end within 0.5 s");
  BOOST_TEST(took < 30);
}

BOOST_AUTO_TEST_SUITE_END()
