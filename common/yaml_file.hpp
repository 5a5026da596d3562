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

}  // namespace common
