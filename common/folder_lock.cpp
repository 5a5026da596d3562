#include "common/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/errors.hpp"

namespace common {
namespace {

namespace fs = std::filesystem;

std::string why(int error) { return std::strerror(error); }

// The folders create_directories(dir) is about to create, deepest first.
std::vector<std::string> missing_folders(const fs::path& dir) {
  std::vector<std::string> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  return missing;
}

// The pid the holder wrote into the lock file ("" while it has not written it yet).
std::string holder_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

void create_folder(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw FolderError(ExitCode::BadInput, dir + ": is a file, not a folder: choose another folder for the results");
  fs::create_directories(dir, ec);
  if (ec) throw FolderError(ExitCode::BadInput, dir + ": cannot create the results folder (" + ec.message() + ")");
}

FolderLock::FolderLock(const std::string& dir) : dir_(dir), path_((fs::path(dir) / kFileName).string()) {
  created_ = missing_folders(dir);
  create_folder(dir);
  // A few tries: each one that finds the file replaced under it (a holder that just finished) retries.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int error = errno;
      release();
      throw FolderError(ExitCode::BadInput, dir + ": cannot write in the results folder (" + why(error) + ")");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string pid = holder_pid(fd);
      ::close(fd);
      if (error != EWOULDBLOCK) {
        release();
        throw FolderError(ExitCode::Failure, dir + ": cannot lock the results folder (" + why(error) + ")");
      }
      throw FolderError(ExitCode::Failure, dir + ": another orchestra run is writing here (pid " + (pid.empty() ? "unknown" : pid) +
                                               "): wait for it to end, or choose another folder");
    }
    struct stat held {}, named {};
    if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        const int error = errno;
        ::unlink(path_.c_str());
        ::close(fd);
        release();
        throw FolderError(ExitCode::BadInput, dir + ": cannot write in the results folder (" + why(error) + ")");
      }
      fd_ = fd;
      return;
    }
    ::close(fd);  // the holder unlinked it as we opened it: lock the new one
  }
  release();
  throw FolderError(ExitCode::Failure, dir + ": cannot lock the results folder (it keeps changing hands)");
}

FolderLock::FolderLock(FolderLock&& other) noexcept
    : dir_(std::move(other.dir_)), path_(std::move(other.path_)), fd_(other.fd_), created_(std::move(other.created_)) {
  other.fd_ = -1;
  other.created_.clear();
}

FolderLock::~FolderLock() { release(); }

void FolderLock::release() noexcept {
  if (fd_ >= 0) {
    ::unlink(path_.c_str());  // before letting go: see the header
    ::close(fd_);
    fd_ = -1;
  }
  // A folder this run created and left empty (it failed before writing anything) goes again;
  // rmdir removes nothing but an empty folder.
  for (const auto& folder : created_)
    if (::rmdir(folder.c_str()) != 0) break;
  created_.clear();
}

}  // namespace common
