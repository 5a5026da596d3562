// Results are never half-written: each file is written to a temporary name beside its target and
// renamed over it (rename is atomic within a file system).
#pragma once

#include <string>

namespace experiments {

void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace experiments
