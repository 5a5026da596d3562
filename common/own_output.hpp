// A file a command writes whole at a path the user names (`surrogate fit --out`, `--paths`,
// `surrogate calibrate --out`, `surrogate hardest --out`) is replaced only where a file of the same
// kind stands: a slip of the path (`--out rounds-000010-000019.csv`, `--out train.yaml`) must not
// destroy a round log or a training config.
#pragma once

#include <string>

namespace common {

// Nothing where `path` is free, or holds a file that contains `signature` (text every file of its
// kind holds: `"format": "orchestra-surrogate"`, a CSV's header). Otherwise common::UsageError
// "FLAG PATH: holds a file that is not KIND: this command replaces only its own; choose another path".
void check_replaceable_output(const std::string& path, const std::string& flag, const std::string& kind, const std::string& signature);

}  // namespace common
