// Results, policies and checkpoints are never half-written: each file is written to a temporary
// name beside its target, flushed to disk (fsync) and renamed over it, so a crash or a killed
// process leaves either the old file or the new one, never part of one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace common {

// Throws common::SystemError naming the path when it cannot be written (the temporary file removed).
void write_file_atomic(const std::string& path, std::string_view content);
void write_file_atomic(const std::string& path, const std::vector<char>& bytes);

// The whole file; throws common::DataError naming the path when it cannot be read (a missing input file).
std::vector<char> read_file_bytes(const std::string& path);

}  // namespace common
