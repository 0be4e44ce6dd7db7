// run_contained (contained_run.hpp): work that returns or throws ends normally, in a child
// (its effects stay there); a crash, an exit or a hang is reported with how the child ended,
// and a hang is killed at the limit.
#include "contained_run.hpp"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

using glabench::run_contained;

BOOST_AUTO_TEST_SUITE(contained_run)

BOOST_AUTO_TEST_CASE(work_that_returns_or_throws_ends_normally_in_a_child) {
  int touched = 0;
  auto r = run_contained([&] { touched = 1; }, 30);
  BOOST_TEST(r.ended_normally, r.how);
  BOOST_TEST(touched == 0);  // the child's copy was written
  r = run_contained([] { throw std::runtime_error("thrown"); }, 30);
  BOOST_TEST(r.ended_normally, r.how);
}

BOOST_AUTO_TEST_CASE(a_crash_or_an_exit_is_reported) {
  auto r = run_contained([] { std::raise(SIGSEGV); }, 30);
  BOOST_TEST(!r.ended_normally);
  BOOST_TEST(r.how.find("was killed by signal 11") != std::string::npos, r.how);
  r = run_contained([] { _exit(3); }, 30);
  BOOST_TEST(!r.ended_normally);
  BOOST_TEST(r.how == "exited with code 3");
}

BOOST_AUTO_TEST_CASE(a_hang_is_killed_at_the_limit) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_contained([] { std::this_thread::sleep_for(std::chrono::seconds(60)); }, 0.5);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(!r.ended_normally);
  BOOST_TEST(r.how == "did not end within 0.5 s");
  BOOST_TEST(took < 30);
}

BOOST_AUTO_TEST_SUITE_END()
