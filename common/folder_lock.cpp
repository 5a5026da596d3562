#include "common/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/errors.hpp"
#include "common/leftovers.hpp"

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

// The pid of another process that holds the lock file at `path` ("" when none holds it, or when
// this process does: a command may lock a folder inside its own, calibrate's --traces say).
std::string other_holder(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string pid;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    pid = holder_pid(fd);
    if (pid.empty()) pid = "unknown";
    if (pid == std::to_string(::getpid())) pid.clear();
  } else {
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
  return pid;
}

// Folders below `dir` this deep are looked at for a run's lock (seed-<N>/ of a multi-seed run, an
// evaluation's <cluster>/<policy>/): deeper ones are no results folder of ours, and a walk of a
// whole home folder given as --out would take long.
constexpr int kNestedDepth = 4;

// A run that holds a folder around `dir` (an ancestor) or inside it (a descendant) would write into
// the same files: "" when there is none, else what to say.
std::string nested_holder(const fs::path& dir) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(dir, ec).lexically_normal();
  if (ec) return "";
  for (fs::path p = absolute.parent_path(); !p.empty(); p = p.parent_path()) {
    const std::string pid = other_holder(p / FolderLock::kFileName);
    if (!pid.empty()) return "another orchestra run is writing in " + p.string() + ", which holds this folder (pid " + pid + ")";
    if (p == p.parent_path()) break;
  }
  fs::recursive_directory_iterator it(absolute, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it.depth() >= kNestedDepth - 1 || it->is_symlink(ec)) it.disable_recursion_pending();
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    const std::string pid = other_holder(it->path() / FolderLock::kFileName);
    if (!pid.empty()) return "another orchestra run is writing in " + it->path().string() + ", inside this folder (pid " + pid + ")";
  }
  return "";
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
      // Checked with this lock held, so that of two runs that start together, one into a folder
      // and one into a folder inside it, at least one sees the other.
      if (const std::string nested = nested_holder(dir); !nested.empty()) {
        release();
        throw FolderError(ExitCode::Failure, dir + ": " + nested + ": wait for it to end, or choose another folder");
      }
      remove_leftovers(dir, kNestedDepth);  // of killed runs: the folder is this run's now
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
