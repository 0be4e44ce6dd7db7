// The fixtures `glabench fixtures make` writes: a deterministic small set covering the
// edge cases (committed under datasets/fixtures, 5 MB) and, on demand, a
// `bench` preset of larger problems. Expected results come from the fp64 reference.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fixture.hpp"
#include "glabench/reference/random_inputs.hpp"

namespace glabench {

struct fixture_recipe {
  std::string name;  // the file is <name>.h5
  std::string description;
  problem prob;
  random_problem_options opts;  // opts.seed is derived from the name
};

inline constexpr std::string_view kFixturePresets[] = {"small", "bench"};

// Throws std::invalid_argument for an unknown preset.
std::vector<fixture_recipe> fixture_recipes(std::string_view preset);

// Draws the inputs and computes the expected results.
fixture make_fixture(const fixture_recipe& recipe);

}  // namespace glabench
