#include "common/leftovers.hpp"

#include <signal.h>

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <vector>

namespace common {
namespace {

namespace fs = std::filesystem;

// The digits of `text` from `at` up to `end` (npos: the end of text) as a pid; 0 when not all digits.
long pid_in(const std::string& text, std::size_t at, std::size_t end) {
  if (end == std::string::npos) end = text.size();
  if (at >= end || end - at > 9) return 0;
  long pid = 0;
  for (std::size_t i = at; i < end; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return 0;
    pid = pid * 10 + (text[i] - '0');
  }
  return pid;
}

bool has_ended(long pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

constexpr const char* kTemporaryMarker = ".orchestra-tmp-";  // atomic_file.hpp's temporary_path

// A temporary file is a regular file, a staging or copy folder a folder: a user's folder named like
// a temporary file (or the other way round) is not one, whatever its name.
bool is_leftover_kind(const std::string& name, const fs::directory_entry& entry) {
  std::error_code ec;
  const auto status = entry.symlink_status(ec);
  if (ec) return false;
  return name.find(kTemporaryMarker) != std::string::npos ? fs::is_regular_file(status) : fs::is_directory(status);
}

}  // namespace

long leftover_pid(const std::string& name) {
  if (name.size() < 2 || name[0] != '.') return 0;
  if (const auto at = name.rfind(kTemporaryMarker); at != std::string::npos && at > 1)
    return pid_in(name, at + std::char_traits<char>::length(kTemporaryMarker), std::string::npos);
  std::string stem = name;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".old") == 0) stem.resize(stem.size() - 4);
  for (const char* kind : {".staging-", ".copy-"}) {
    const auto at = stem.rfind(kind);
    if (at == std::string::npos || at == 0) continue;
    const std::size_t digits = at + std::char_traits<char>::length(kind);
    const auto dash = stem.find('-', digits);
    // mkdtemp's six characters after the pid
    if (dash == std::string::npos || stem.size() - dash - 1 != 6) return 0;
    return pid_in(stem, digits, dash);
  }
  return 0;
}

int remove_leftovers(const std::string& dir, int depth) {
  std::vector<fs::path> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const long pid = leftover_pid(name);
    if (pid > 0 && is_leftover_kind(name, *it)) {
      it.disable_recursion_pending();  // a staging folder's contents are its own
      if (has_ended(pid)) found.push_back(it->path());
    } else if (it.depth() >= depth - 1 || it->is_symlink(ec)) {
      it.disable_recursion_pending();
    }
  }
  int removed = 0;
  for (const auto& path : found) {
    std::error_code gone;
    if (fs::remove_all(path, gone) > 0 && !gone) ++removed;
  }
  return removed;
}

}  // namespace common
