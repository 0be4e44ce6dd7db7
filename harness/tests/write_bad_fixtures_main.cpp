// Writes the malformed fixtures into a folder and a manifest, expected.tsv, of
// "file<TAB>field<TAB>rule fragment" lines for cli_bad_input_test.sh.
#include <fstream>
#include <iostream>

#include "bad_fixtures.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_bad_fixtures DIR\n";
    return 2;
  }
  std::ofstream manifest(std::string(argv[1]) + "/expected.tsv");
  for (const auto& b : glabench::testing::write_bad_fixtures(argv[1]))
    manifest << b.path << '\t' << b.field << '\t' << b.rule_fragment << '\n';
  return manifest ? 0 : 1;
}
