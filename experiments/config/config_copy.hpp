#pragma once
// A copy of a config written in another folder (an evaluation's clusters, the surrogate's variants
// of `orchestra surrogate fidelity`, the clusters of `orchestra draw`) must read the same files as
// the original, whose relative paths are read from its own folder.

#include <yaml-cpp/yaml.h>

#include <string>

namespace experiments {

// Makes root's relative data.path and runtime.surrogate absolute against config_file's folder, and
// each policy's file (orchestra-a3c's `policy:`, planned-t's `surrogate:`) where the reader finds it:
// as given if it is there (from the working folder), else beside the config. Keys that are missing
// or not text, and policy files found nowhere, are left as they are (the config reader names them).
void anchor_relative_paths(YAML::Node& root, const std::string& config_file);

}  // namespace experiments
