// Names that become path components: an experiment's name (results/<name>/), a policy's label
// (its results folder, its checkpoint, its trace file, its figures), a cluster's name (evaluate's
// DIR/<cluster>/), a worker's and a server's name (columns of rounds.csv and iterations.csv). They
// are checked where they are read, by this one rule, the way coreutils and rsync treat a path
// component: a name is never empty, never `.` or `..`, holds no separator and no control
// character. Beyond that: no leading `.` (a hidden folder, which `compare` skips and where a run
// stages its files), no `,` or `"` (a name is a CSV cell and a column header), at most
// kMaxNameBytes bytes (a file name may be 255 bytes, and a label gets suffixes).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace common {

inline constexpr std::size_t kMaxNameBytes = 200;

// Why `name` cannot name a file or folder, or nullopt when it can: "is empty", "is '..', which
// names the folder above", "holds '/', a path separator", "holds a control character (byte 0x0a)", ...
std::optional<std::string> name_problem(const std::string& name);

// `name` as a message shows it: quoted, control characters escaped ("'a\nb'").
std::string quoted_name(const std::string& name);

// The first name that appears twice in `names`, if any.
std::optional<std::string> first_duplicate(const std::vector<std::string>& names);

}  // namespace common
