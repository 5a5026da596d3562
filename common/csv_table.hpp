// CSV files read back for `orchestra compare` and the plots: the header names the columns and
// cells are looked up by column name, so a writer that adds a column breaks no reader.
// RFC 4180 quoting ("a,b", "say ""hi""") is understood, although our writers do not need it yet.
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace common {

// Row by row, for files too large to hold as strings (rounds.csv of a long run on many workers).
class CsvReader {
 public:
  // Reads the header; throws common::DataError for an empty input.
  CsvReader(std::istream& in, std::string source);
  // Moves to the next row (blank lines are skipped); false at the end. Throws common::DataError for a
  // row whose cell count differs from the header's, or an unterminated quote.
  bool next();

  const std::vector<std::string>& columns() const { return columns_; }
  std::optional<std::size_t> find(const std::string& column) const;
  // The index of `column`; throws common::DataError naming the file and the missing column.
  std::size_t column(const std::string& name) const;
  const std::vector<std::string>& cells() const { return cells_; }
  std::size_t line() const { return line_; }  // where the current row starts, from 1
  // A cell of the current row as a number: "nan" and an empty cell read as NaN, "inf" as inf;
  // anything else that is not a number throws common::DataError naming the file, line and column.
  double number(std::size_t column) const;

 private:
  bool read_record(std::vector<std::string>& cells);

  std::istream& in_;
  std::string source_;
  std::vector<std::string> columns_;
  std::vector<std::string> cells_;
  std::size_t next_line_ = 1;
  std::size_t line_ = 0;
};

// A small CSV file held whole.
struct CsvTable {
  std::string source;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // every row has columns.size() cells
  std::vector<std::size_t> lines;              // the line each row starts on, for messages

  std::optional<std::size_t> find(const std::string& column) const;
  std::size_t column(const std::string& name) const;  // throws common::DataError
  double number(std::size_t row, std::size_t column) const;  // as CsvReader::number
};

CsvTable parse_csv(const std::string& text, const std::string& source);  // throws common::DataError
CsvTable read_csv(const std::string& path);                               // throws common::DataError

// Parses one cell as CsvReader::number does; false if it is not a number.
bool parse_number(const std::string& cell, double& value);

}  // namespace common
