#include "common/json_file.hpp"

#include <vector>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"

namespace common {

nlohmann::json read_json_file(const std::string& path) {
  const std::vector<char> bytes = read_file_bytes(path);
  try {
    return nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace common
