// Small helpers shared by the test suites: temporary folders, files, running the CLI.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

}  // namespace testing
