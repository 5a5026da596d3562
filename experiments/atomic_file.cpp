#include "experiments/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace experiments {

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write (" + std::generic_category().message(errno) + ")");
    out << content;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error(path + ": write failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::remove(temporary.c_str());
    throw std::runtime_error(path + ": cannot rename into place (" + ec.message() + ")");
  }
}

}  // namespace experiments
