#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28, _GNU_SOURCE)
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/errors.hpp"

namespace common {
namespace {

// The rename is an entry of the parent folder: until the folder is on disk too, a power cut can
// bring back the old file (or none) though the new one was written. Best effort: the new file is
// already in place, and some file systems refuse fsync on a folder.
void sync_parent_folder(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  if (parent.empty()) parent = ".";
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string temporary_path(const std::string& path) {
  const std::filesystem::path target(path);
  return (target.parent_path() / ("." + target.filename().string() + ".orchestra-tmp-" + std::to_string(::getpid()))).string();
}

void write_file_atomic(const std::string& path, std::string_view content, FileAccess access) {
  const std::string temporary = temporary_path(path);
  // O_EXCL after removing a stale one: a file created now gets the mode asked for (an existing
  // one would keep its own).
  ::unlink(temporary.c_str());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, access == FileAccess::OwnerOnly ? 0600 : 0644);
  if (fd < 0) throw SystemError(path + ": cannot write (" + std::strerror(errno) + ")");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::remove(temporary.c_str());
      throw SystemError(path + ": write failed (" + why + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  // The data must be on disk before the rename makes it the file, or a crash could leave an
  // empty file under the final name.
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) {
    std::remove(temporary.c_str());
    throw SystemError(path + ": fsync failed");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::remove(temporary.c_str());
    throw SystemError(path + ": cannot rename into place (" + ec.message() + ")");
  }
  sync_parent_folder(path);
}

void write_file_atomic(const std::string& path, const std::vector<char>& bytes) {
  write_file_atomic(path, std::string_view(bytes.data(), bytes.size()));
}

std::vector<char> read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw DataError(path + ": is a folder, not a file");  // it would read as empty
  // A FIFO or a device would block, or never end (a FIFO given as a policy hung soup for good).
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw DataError(path + ": is not a regular file (a FIFO, socket or device)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot read (" + std::strerror(errno) + ")");
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void replace_folder(const std::string& staging, const std::string& target) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(target, ec)) {
    fs::rename(staging, target, ec);
    if (ec) throw SystemError(target + ": cannot put the new folder in place (" + ec.message() + ")");
    sync_parent_folder(target);
    return;
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    sync_parent_folder(target);
    fs::remove_all(staging, ec);  // now the old folder
    return;
  }
  // No swap on this file system: the old folder aside first, then the new one in its place.
  const std::string aside = staging + ".old";
  fs::rename(target, aside, ec);
  if (ec) throw SystemError(target + ": cannot move the old folder aside (" + ec.message() + ")");
  fs::rename(staging, target, ec);
  if (ec) {
    std::error_code back;
    fs::rename(aside, target, back);
    throw SystemError(target + ": cannot put the new folder in place (" + ec.message() + ")");
  }
  sync_parent_folder(target);
  fs::remove_all(aside, ec);
}

}  // namespace common
