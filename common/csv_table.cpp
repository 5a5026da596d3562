#include "common/csv_table.hpp"

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/errors.hpp"

namespace common {
namespace {

std::optional<std::size_t> index_of(const std::vector<std::string>& columns, const std::string& name) {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  return std::nullopt;
}

double number_or_throw(const std::string& cell, const std::string& source, std::size_t line, const std::string& column) {
  double v = 0;
  if (!parse_number(cell, v))
    throw common::DataError(source + ":" + std::to_string(line) + ": " + column + ": expected a number, got '" + cell + "'");
  return v;
}

}  // namespace

bool parse_number(const std::string& cell, double& value) {
  if (cell.empty() || cell == "nan" || cell == "-nan") {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  char* end = nullptr;
  value = std::strtod(cell.c_str(), &end);  // out of range reads as +-inf or 0, as written
  return end == cell.c_str() + cell.size();
}

CsvReader::CsvReader(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {
  if (!read_record(columns_) || (columns_.size() == 1 && columns_[0].empty()))
    throw common::DataError(source_ + ": empty file (expected a CSV header)");
}

// One record: a line, or several when a quoted cell holds line breaks.
bool CsvReader::read_record(std::vector<std::string>& cells) {
  cells.clear();
  std::string line;
  if (!std::getline(in_, line)) return false;
  line_ = next_line_++;
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0;; ++i) {
    if (i == line.size()) {
      if (!quoted) break;
      if (!std::getline(in_, line)) throw common::DataError(source_ + ":" + std::to_string(line_) + ": unterminated quoted cell");
      ++next_line_;
      cell += '\n';
      i = static_cast<std::size_t>(-1);  // the loop's ++i starts the new line at 0
      continue;
    }
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"' && cell.empty()) {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  if (!cell.empty() && cell.back() == '\r') cell.pop_back();  // a file written on Windows
  cells.push_back(std::move(cell));
  return true;
}

bool CsvReader::next() {
  while (read_record(cells_)) {
    if (cells_.size() == 1 && cells_[0].empty()) continue;  // a blank line
    if (cells_.size() != columns_.size())
      throw common::DataError(source_ + ":" + std::to_string(line_) + ": expected " + std::to_string(columns_.size()) +
                           " cells as in the header, got " + std::to_string(cells_.size()));
    return true;
  }
  return false;
}

std::optional<std::size_t> CsvReader::find(const std::string& name) const { return index_of(columns_, name); }

std::size_t CsvReader::column(const std::string& name) const {
  if (const auto i = find(name)) return *i;
  throw common::DataError(source_ + ": no column '" + name + "' in the header");
}

double CsvReader::number(std::size_t col) const { return number_or_throw(cells_.at(col), source_, line_, columns_.at(col)); }

std::optional<std::size_t> CsvTable::find(const std::string& name) const { return index_of(columns, name); }

std::size_t CsvTable::column(const std::string& name) const {
  if (const auto i = find(name)) return *i;
  throw common::DataError(source + ": no column '" + name + "' in the header");
}

double CsvTable::number(std::size_t row, std::size_t col) const {
  return number_or_throw(rows.at(row).at(col), source, lines.at(row), columns.at(col));
}

CsvTable parse_csv(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  CsvReader reader(in, source);
  CsvTable table;
  table.source = source;
  table.columns = reader.columns();
  while (reader.next()) {
    table.rows.push_back(reader.cells());
    table.lines.push_back(reader.line());
  }
  return table;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::DataError(path + ": cannot read");
  std::stringstream s;
  s << in.rdbuf();
  return parse_csv(s.str(), path);
}

}  // namespace common
