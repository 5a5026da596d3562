// Whole-file reads and atomic writes for policies and checkpoints: a file is written to a
// temporary name beside its target, flushed to disk and renamed over it, so a crash (or a killed
// server) leaves either the old file or the new one, never half of one. experiments/atomic_file
// does the same for results; agents cannot depend on experiments (DESIGN.md), hence this copy.
#pragma once

#include <string>
#include <vector>

namespace agents {

void write_file_atomic(const std::string& path, const std::vector<char>& bytes);
// Throws std::runtime_error naming the path when it cannot be read.
std::vector<char> read_file_bytes(const std::string& path);

}  // namespace agents
