// One run owns a results folder. Every command that writes one (run, run --seeds, launch,
// evaluate, train, serve, calibrate, draw) holds an advisory lock on DIR/.orchestra.lock for its
// whole run: a second command into the same folder stops at once, with one line naming the
// holder's pid, instead of both writing and one run's files silently surviving.
//
// The lock is flock(2) on the file: the kernel drops it when the holder ends, however it ends, so
// a killed run never leaves a stale lock. The holder unlinks the file before it lets go; a
// process that opened the old file meanwhile finds, once it holds the lock, that the path no
// longer names what it locked, and tries again (the usual flock + unlink protocol).
//
// A lock holds the folder's tree: a run into a folder inside one that another run holds (DIR/seed-1
// while `run --seeds --out DIR` runs), or around one (DIR while another run writes DIR/seed-1), is
// refused the same way. Folders inside are looked at down to 4 levels.
//
// Once it holds the folder, a run removes what killed runs left there (common/leftovers.hpp).
//
// Taking the lock is also the check that the folder can be written, before any work: a path that
// is a file, or a folder without write permission, is one clear line here.
#pragma once

#include <string>
#include <vector>

namespace common {

// Creates `dir` and its missing parents; throws common::FolderError naming it when a file is in the
// way or it cannot be created (for a command that writes into a folder without claiming it).
void create_folder(const std::string& dir);

class FolderLock {
 public:
  // Creates `dir` (and missing parents) and takes the lock. Throws common::FolderError naming the
  // folder when it cannot be created or written, or when another process holds it (its pid).
  explicit FolderLock(const std::string& dir);
  ~FolderLock();
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&&) = delete;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  const std::string& dir() const { return dir_; }
  static constexpr const char* kFileName = ".orchestra.lock";

 private:
  void release() noexcept;

  std::string dir_;
  std::string path_;
  int fd_ = -1;
  std::vector<std::string> created_;  // folders this lock created, deepest first: removed again if left empty
};

}  // namespace common
