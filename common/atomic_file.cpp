#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "common/errors.hpp"

namespace common {

void write_file_atomic(const std::string& path, std::string_view content) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError(path + ": cannot write (" + std::strerror(errno) + ")");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::remove(temporary.c_str());
      throw WriteError(path + ": write failed (" + why + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  // The data must be on disk before the rename makes it the file, or a crash could leave an
  // empty file under the final name.
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) {
    std::remove(temporary.c_str());
    throw WriteError(path + ": fsync failed");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::remove(temporary.c_str());
    throw WriteError(path + ": cannot rename into place (" + ec.message() + ")");
  }
}

void write_file_atomic(const std::string& path, const std::vector<char>& bytes) {
  write_file_atomic(path, std::string_view(bytes.data(), bytes.size()));
}

std::vector<char> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read (" + std::strerror(errno) + ")");
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace common
