// Every subcommand that `orchestra help` lists answers --help with its usage and an example
// (issue 7). The list is read from `orchestra help` itself, so a new subcommand is checked too.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "test_helpers.hpp"

namespace {

// The names under "commands:" in `orchestra help`, up to the first blank line.
std::vector<std::string> listed_commands(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "commands:") {
      in_list = true;
    } else if (in_list) {
      if (line.empty()) break;
      std::istringstream words(line);
      std::string name;
      words >> name;
      if (!name.empty() && name != "help") names.push_back(name);
    }
  }
  return names;
}

}  // namespace

TEST_CASE("orchestra: every listed subcommand has --help with an example") {
  const auto help = testing::run_command(std::string(ORCHESTRA_BINARY) + " help");
  REQUIRE(help.exit_code == 0);
  const auto names = listed_commands(help.output);
  REQUIRE(names.size() >= 2);  // at least run and compare
  for (const auto& name : names) {
    const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " " + name + " --help");
    CHECK_MESSAGE(r.exit_code == 0, name);
    CHECK_MESSAGE(r.output.find("usage: orchestra " + name) != std::string::npos, name);
    CHECK_MESSAGE(r.output.find("example") != std::string::npos, name);
  }
}
