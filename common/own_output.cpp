#include "common/own_output.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"

namespace common {

void check_replaceable_output(const std::string& path, const std::string& flag, const std::string& kind, const std::string& signature) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return;
  const std::string refusal = flag + " " + path + ": ";
  if (!std::filesystem::is_regular_file(status)) throw UsageError(refusal + "is not a file: choose another path");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || text.str().find(signature) == std::string::npos)
    throw UsageError(refusal + "holds a file that is not " + kind + ": this command replaces only its own; choose another path");
}

}  // namespace common
