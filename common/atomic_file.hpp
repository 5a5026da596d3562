// Results, policies and checkpoints are never half-written: each file is written to a temporary
// name beside its target, flushed to disk (fsync) and renamed over it, so a crash or a killed
// process leaves either the old file or the new one, never part of one; the folder is flushed after
// the rename too, so that the rename itself survives a power cut.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace common {

// Where a file being written waits for its rename: hidden beside it, with a marker no user file
// carries and the writer's pid (".summary.json.orchestra-tmp-123"), so that a killed run's
// leftover is told apart from a user's `notes.tmp-1` (leftovers.hpp removes only these).
std::string temporary_path(const std::string& path);

// Who may read the file: everyone (results), or its owner only from its first byte (secret keys:
// a chmod after the rename would leave a moment where others can read them).
enum class FileAccess { Shared, OwnerOnly };

// Throws common::SystemError naming the path when it cannot be written (the temporary file removed).
void write_file_atomic(const std::string& path, std::string_view content, FileAccess access = FileAccess::Shared);
void write_file_atomic(const std::string& path, const std::vector<char>& bytes);

// Puts the folder `staging` (complete) at `target`, in place of what is there: where `target`
// exists the two are swapped in one step (renameat2 RENAME_EXCHANGE), so no moment shows neither,
// and then the old one is removed. Where the file system cannot swap, the old folder is first
// renamed aside (its contents never deleted before the new are in place). Throws
// common::SystemError naming `target` when it cannot.
void replace_folder(const std::string& staging, const std::string& target);

// The whole file; throws common::DataError naming the path when it cannot be read (a missing input file).
std::vector<char> read_file_bytes(const std::string& path);

}  // namespace common
