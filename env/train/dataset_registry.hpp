// The datasets the toolkit reads: one table from which `data.dataset:`'s spellings, `orchestra
// profile --help`, the README's list (checked by a test) and load_dataset all come. To add a
// dataset: a reader returning a DatasetPair (a file of its own in env/train/ for a new format),
// one row in dataset_registry.cpp, and its name in the README's config reference
// (docs/ARCHITECTURE.md, "Adding things").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/train/dataset.hpp"

namespace env {

struct DatasetKind {
  const char* name;     // `data.dataset:` in configs, `--dataset` of orchestra profile
  const char* summary;  // one line for --help and the README
  // The folder read when the config gives no `data.path`; "" when it must give one. A dataset
  // that reads no files (synthetic) ignores the path.
  const char* default_path;
  bool reads_files;
  // [C, H, W] of its samples, without reading the files (timing-only runs, orchestra profile).
  std::vector<std::int64_t> (*input_shape)(const DataSpec& spec);
  // Both splits, normalized; throws common::DataError naming the file that is missing or malformed.
  DatasetPair (*read)(const DataSpec& spec, std::uint64_t seed);
};

// Every dataset, in the order --help and the README list them.
const std::vector<DatasetKind>& dataset_registry();
std::vector<std::string> dataset_names();
// The row of `name`; throws std::invalid_argument for a name not in the table (a config's name
// is checked when it is read, so this is a caller's bug).
const DatasetKind& dataset_kind(const std::string& name);
// "  name           summary" lines, one per dataset, for --help.
std::string dataset_help();

}  // namespace env
