// Every subcommand that `orchestra help` lists answers --help with its usage and an example
// (issue 7). The list is read from `orchestra help` itself, so a new subcommand is checked too.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test_helpers.hpp"

namespace {

// The commands `orchestra help` lists: under each task heading, a line "  NAME ARGS  summary"
// (or, where NAME ARGS is wider than the column, "  NAME ARGS" and the summary on the next line,
// in the column) followed by "  ...  e.g. orchestra NAME ...". Returns the names; checks that every
// summary starts in the column and the example lines.
std::vector<std::string> listed_commands(const std::string& help, int& headings) {
  std::vector<std::string> names;
  std::istringstream in(help);
  std::string line;
  headings = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == ':' && line[0] != ' ') ++headings;
    if (line.size() < 3 || line.rfind("  ", 0) != 0 || line[2] == ' ') continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (name == "help") continue;
    names.push_back(name);
    const auto in_column = [](const std::string& text) { return text.size() > 19 && text[18] == ' ' && text[19] != ' '; };
    if (!in_column(line)) {  // the usage alone: the summary follows, in the column
      std::string summary;
      std::getline(in, summary);
      CHECK_MESSAGE(summary.rfind(std::string(19, ' '), 0) == 0, name);
      CHECK_MESSAGE(in_column(summary), name);
      CHECK_MESSAGE(summary.find("e.g.") == std::string::npos, name);
    }
    std::string example;
    std::getline(in, example);
    CHECK_MESSAGE(example.find("e.g. orchestra " + name + " ") != std::string::npos, name);
  }
  return names;
}

}  // namespace

TEST_CASE("orchestra: every listed subcommand has --help with an example") {
  const auto help = testing::run_command(std::string(ORCHESTRA_BINARY) + " help");
  REQUIRE(help.exit_code == 0);
  int headings = 0;
  const auto names = listed_commands(help.output, headings);
  CHECK(headings == 4);  // run and compare / learn a controller / real clusters / tools
  REQUIRE(names.size() >= 9);
  for (const auto& name : names) {
    const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " " + name + " --help");
    CHECK_MESSAGE(r.exit_code == 0, name);
    CHECK_MESSAGE(r.output.find("usage: orchestra " + name) != std::string::npos, name);
    CHECK_MESSAGE(r.output.find("example") != std::string::npos, name);
  }
}

TEST_CASE("orchestra: a flag's number is decimal as the help writes it, and hex, a leading space or '+', inf and nan are refused") {
  testing::TempDir dir;
  const std::string redeploy = std::string(ORCHESTRA_BINARY) + " redeploy " + ORCHESTRA_SOURCE_DIR + "/pretrained/orchestra-a3c.pt --out " + (dir / "r.pt");
  for (const char* bad : {"0x1p-2", "' 0.25'", "+0.25", "inf", "nan", "0.25x", "1e", "."}) {
    CAPTURE(bad);
    const auto r = testing::run_command(redeploy + " --min-T-x-start " + bad);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--min-T-x-start: expected a number in [0, 1e+06], got '") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "r.pt"));
  const auto ok = testing::run_command(redeploy + " --min-T-x-start 2.5e-1");
  CHECK(ok.exit_code == 0);
  const std::string draw = std::string(ORCHESTRA_BINARY) + " draw " + ORCHESTRA_SOURCE_DIR + "/configs/a3c_general.yaml --out " + (dir / "drawn");
  for (const char* bad : {"0x10", "' 3'", "+2", "3.0"}) {
    CAPTURE(bad);
    const auto r = testing::run_command(draw + " --count " + bad);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--count: expected an integer in [") != std::string::npos);
  }
}

TEST_CASE("orchestra: a usage error is one line that points to the command's --help, for every listed subcommand") {
  const auto help = testing::run_command(std::string(ORCHESTRA_BINARY) + " help");
  int headings = 0;
  const auto names = listed_commands(help.output, headings);
  REQUIRE(names.size() >= 9);
  for (const auto& name : names) {
    // Nothing runs: every command refuses the flag before it reads a file or starts work.
    const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " " + name + " --no-such-flag");
    CAPTURE(r.output);
    CHECK_MESSAGE(r.exit_code == 2, name);
    CHECK_MESSAGE(std::count(r.output.begin(), r.output.end(), '\n') == 1, name);
    CHECK_MESSAGE(r.output.rfind("orchestra " + name + ": ", 0) == 0, name);
    CHECK_MESSAGE(r.output.find("(try: orchestra " + name + " --help)\n") != std::string::npos, name);
  }
  // A flag's bad value too, and a missing argument.
  const auto count = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw configs/a3c_general.yaml --count x");
  CHECK(count.output == "orchestra draw: --count: expected an integer in [1, 10000], got 'x' (try: orchestra draw --help)\n");
  const auto run = testing::run_command(std::string(ORCHESTRA_BINARY) + " run");
  CHECK(run.output == "orchestra run: needs a CONFIG file (try: orchestra run --help)\n");
  // A forgotten value is not the next flag: `--out --quiet` wrote into a folder named "--quiet".
  testing::TempDir dir;
  const auto swallowed = testing::run_command("cd " + dir.path.string() + " && " + ORCHESTRA_BINARY + " run " + ORCHESTRA_SOURCE_DIR +
                                              "/configs/quickstart.yaml --out --quiet");
  CHECK(swallowed.output == "orchestra run: --out needs a value, got the flag --quiet (try: orchestra run --help)\n");
  const auto empty = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw configs/a3c_general.yaml --out ''");
  CHECK(empty.output == "orchestra draw: --out needs a value, got '' (try: orchestra draw --help)\n");
  CHECK(std::filesystem::is_empty(dir.path));
}
