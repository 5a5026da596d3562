// Reading a YAML config file that a user names (a training config, a workload, an environment's
// config): one reader, so a missing file, a folder, an unreadable file and YAML that does not
// parse each read the same, naming the file (and the line), instead of libstdc++'s or yaml-cpp's
// words ("basic_filebuf::underflow error reading the file: Is a directory").
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace common {

// The parsed document. Throws common::ConfigError "PATH: no such config file", "PATH: is a
// directory, not a config file", "PATH: cannot read (why)" or "PATH:LINE: not valid YAML: why".
YAML::Node read_yaml_file(const std::string& path);

// `text` (read from `file`) parsed: "FILE:LINE: not valid YAML: why", and a second document (after
// `---`) is "FILE:LINE: a second YAML document: one config per file" (yaml-cpp's Load reads the
// first and drops the rest without a word).
YAML::Node parse_yaml_text(const std::string& text, const std::string& file);

}  // namespace common
