// Small helpers shared by the test suites: temporary folders, files, running the CLI.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/csv_table.hpp"

namespace testing {

// A fresh folder under the system's temp dir, removed when the object goes.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char pattern[] = "/tmp/orchestra-test-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) r.output += buf;
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Column `name` of a results CSV (epochs.csv, rounds.csv, ...), as numbers, row by row.
inline std::vector<double> csv_column(const std::filesystem::path& csv, const std::string& name) {
  const common::CsvTable table = common::read_csv(csv.string());
  const std::size_t c = table.column(name);
  std::vector<double> out;
  for (std::size_t r = 0; r < table.rows.size(); ++r) out.push_back(table.number(r, c));
  return out;
}

// Skipping a test with its reason on a machine that lacks what it needs (gnuplot, the Fashion-MNIST
// data): prints the marker that ctest reads as "skipped" (SKIP_REGULAR_EXPRESSION, set on every
// suite in tests/CMakeLists.txt) and the reason; the test then returns before any check.
inline void skip_test(const std::string& reason) { std::cout << "orchestra-test-skipped: " << reason << std::endl; }

// `program` on PATH (or the path itself, if it holds a '/'), as the toolkit looks for gnuplot.
inline bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

// False, with the test marked skipped, where gnuplot is missing: the figures and the HTML report
// are drawn by it (Debian's gnuplot-nox; a GPU machine set up from pip may have none). `--plot`
// without gnuplot is one clear error, tested apart by hiding gnuplot from PATH.
inline bool gnuplot_or_skip() {
  if (on_path("gnuplot")) return true;
  skip_test("needs gnuplot on PATH to draw figures (Debian's gnuplot-nox package); none here");
  return false;
}

// The Fashion-MNIST files the tests read: configure's ORCHESTRA_TEST_FASHION_MNIST (default: where
// Debian's dataset-fashion-mnist puts them; scripts/gpu_check.sh points it at its unpacked copy).
inline std::string fashion_mnist_dir() { return ORCHESTRA_TEST_FASHION_MNIST; }

// False, with the test marked skipped, where those files are not there.
inline bool fashion_mnist_or_skip() {
  if (std::filesystem::exists(fashion_mnist_dir() + "/train-images-idx3-ubyte.gz") ||
      std::filesystem::exists(fashion_mnist_dir() + "/train-images-idx3-ubyte"))
    return true;
  skip_test("needs the Fashion-MNIST files in " + fashion_mnist_dir() + " (Debian's dataset-fashion-mnist; configure with -DORCHESTRA_TEST_FASHION_MNIST=DIR for another folder)");
  return false;
}

// A folder with no gnuplot in it, to run a command with `PATH=<it>` as on a machine without gnuplot.
inline std::string path_without_gnuplot() { return "/nonexistent-orchestra-test-path"; }

}  // namespace testing
