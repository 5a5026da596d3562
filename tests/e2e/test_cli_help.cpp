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

TEST_CASE("orchestra: a flag given twice is refused, one that collects may come again") {
  const std::string bin = ORCHESTRA_BINARY;
  // The last value used to win without a word: `run --seed 1 ... --seed 2` ran seed 2. (No such
  // config: were the flag let through, the command would stop at the file, not train.)
  const auto seed = testing::run_command(bin + " run no-such.yaml --seed 1 --threads 1 --seed 2");
  CHECK(seed.exit_code == 2);
  CHECK(seed.output == "orchestra run: --seed is given twice: give it once (try: orchestra run --help)\n");
  const auto out = testing::run_command(bin + " draw no-such.yaml --out a --count 2 --out b");
  CHECK(out.output == "orchestra draw: --out is given twice: give it once (try: orchestra draw --help)\n");
  // Through the shared --epochs/--target reader too.
  const auto target = testing::run_command(bin + " evaluate p.pt c.yaml --target 0.8 --target 0.9");
  CHECK(target.output == "orchestra evaluate: --target is given twice: give it once (try: orchestra evaluate --help)\n");
  // --also, --real and --profile collect: the second is taken, and the command goes on to the
  // next check (here: the files it was given do not exist).
  const auto also = testing::run_command(bin + " evaluate --also dsgd --also local-sgd --seeds 1");
  CHECK(also.output == "orchestra evaluate: needs POLICY.pt and CONFIG.yaml files (try: orchestra evaluate --help)\n");
  const auto real = testing::run_command(bin + " surrogate fidelity --real a --real b --seeds 1");
  CHECK(real.output.find("given twice") == std::string::npos);
  CHECK(real.exit_code == 2);
  const auto profile = testing::run_command(bin + " calibrate --profile a=x.json --profile b=y.json");
  CHECK(profile.output == "orchestra calibrate: needs REAL_RESULTS_DIR (try: orchestra calibrate --help)\n");
  // A flag without a value (a switch) given twice changes nothing, and is let be.
  const auto quiet = testing::run_command(bin + " calibrate --quiet --quiet");
  CHECK(quiet.output == "orchestra calibrate: needs REAL_RESULTS_DIR (try: orchestra calibrate --help)\n");
}
