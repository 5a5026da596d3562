// The shared pieces: the YAML reader's duplicate-key check and typed options, the atomic writer,
// and the exit codes the error base carries.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/yaml_reader.hpp"

namespace {

enum class Color { Red, Blue };

std::string error_of(const std::string& yaml) {
  try {
    common::YamlReader r(YAML::Load(yaml), "x.yaml", "");
    r.integer("seed", 0, 0, 100);
    r.reject_unknown_keys();
  } catch (const common::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("yaml: a key given twice is a config error naming both lines") {
  CHECK(error_of("seed: 1\nname: x\nseed: 2\n") == "x.yaml:3: seed: duplicate key (first given on line 1)");
  // Nested mappings are checked when they are read.
  common::YamlReader top(YAML::Load("training:\n  lr: 0.1\n  lr: 0.2\n"), "x.yaml", "");
  CHECK_THROWS_WITH_AS(top.child("training"), "x.yaml:3: training.lr: duplicate key (first given on line 2)", common::ConfigError);
  CHECK(error_of("seed: 1\nname: x\n").find("name: unknown key") != std::string::npos);
}

TEST_CASE("yaml: option() maps spellings to a typed enum, records the spelling, and lists them on error") {
  common::YamlReader r(YAML::Load("color: blue\n"), "x.yaml", "");
  CHECK(r.option("color", Color::Red, {{"red", Color::Red}, {"blue", Color::Blue}}) == Color::Blue);
  CHECK(r.resolved()["color"] == "blue");
  common::YamlReader d(YAML::Load("{}"), "x.yaml", "");
  CHECK(d.option("color", Color::Red, {{"red", Color::Red}, {"blue", Color::Blue}}) == Color::Red);
  CHECK(d.resolved()["color"] == "red");
  common::YamlReader bad(YAML::Load("color: green\n"), "x.yaml", "");
  CHECK_THROWS_WITH_AS(bad.option("color", Color::Red, {{"red", Color::Red}, {"blue", Color::Blue}}),
                       "x.yaml:1: color: expected one of red, blue, got 'green'", common::ConfigError);
}

TEST_CASE("atomic file: writes whole, replaces, leaves no temporary, and reads back") {
  const auto dir = std::filesystem::temp_directory_path() / ("common-atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "f.txt").string();
  common::write_file_atomic(path, std::string("first"));
  common::write_file_atomic(path, std::string("second\n"));
  const auto bytes = common::read_file_bytes(path);
  CHECK(std::string(bytes.begin(), bytes.end()) == "second\n");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
  CHECK(files == 1);
  CHECK_THROWS_WITH_AS(common::write_file_atomic((dir / "missing/f.txt").string(), std::string("x")),
                       doctest::Contains("missing/f.txt: cannot write"), std::runtime_error);
  CHECK_THROWS_WITH_AS(common::read_file_bytes((dir / "none").string()), doctest::Contains("none: cannot read"), std::runtime_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("errors: what the user gave exits 2, a failure at run time exits 1, each with its kind") {
  CHECK(common::ConfigError("x").exit_code() == 2);
  CHECK(common::DataError("x").exit_code() == 2);
  CHECK(common::UsageError("x").exit_code() == 2);
  CHECK(common::PlanError("x").exit_code() == 1);
  CHECK(common::CommError("x").exit_code() == 1);
  CHECK(std::string(common::ConfigError("x").kind()) == "config error");
  const common::Error& base = common::PlotError("gnuplot failed");
  CHECK(std::string(base.what()) == "gnuplot failed");
}
