// How the comparison tables write a number or a label: the same in the table of one run and the
// summary over seeds.
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

namespace experiments {

// Fixed decimals for Markdown; "-" for a missing value.
inline std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Full precision for CSV, so a script reading it loses nothing; empty for a missing value.
inline std::string exact(double v) {
  if (!std::isfinite(v)) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

inline std::string exact(const std::optional<double>& v) { return v ? exact(*v) : std::string(); }

// Labels and run names come from folder names, which may hold a comma or a quote.
inline std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// A pipe in a label would end its Markdown cell early.
inline std::string md_cell(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace experiments
