// Reading a JSON input file (a results folder's summary.json, a profile, a log's task.json): one
// reader, so every command says the same two things naming the file, "cannot read (why)" and
// "not valid JSON (the parser's words)", instead of each its own wording.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace common {

// The parsed document. Throws common::DataError naming `path` when it is missing, a folder,
// unreadable, or not valid JSON (a number out of range, 1e999, included).
nlohmann::json read_json_file(const std::string& path);

}  // namespace common
