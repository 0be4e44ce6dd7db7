#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "bad_fixtures.hpp"
#include "fixture.hpp"
#include "fixture_catalog.hpp"

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
  BOOST_TEST(checked == 30);
}

BOOST_AUTO_TEST_CASE(committed_set_is_small) {
  uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(FIXTURE_DIR)) bytes += e.file_size();
  BOOST_TEST(bytes < 2u * 1024 * 1024);
}

BOOST_AUTO_TEST_CASE(every_validation_rule_names_file_field_and_rule) {
  const auto bad = testing::write_bad_fixtures(SCRATCH_DIR "/bad_fixtures");
  BOOST_TEST(bad.size() >= 14u);
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
}

BOOST_AUTO_TEST_CASE(a_failed_write_leaves_nothing) {
  fixture f = make_fixture(fixture_recipes("small").front());
  const std::string path = SCRATCH_DIR "/no_such_folder/x.h5";
  BOOST_CHECK_THROW(write_fixture(path, f), std::exception);
  BOOST_TEST(!fs::exists(path));
}

BOOST_AUTO_TEST_SUITE_END()
