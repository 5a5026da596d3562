// A surrogate of training read for a config: the file checked against the config's workload.
#pragma once

#include <memory>
#include <string>

#include "common/yaml_reader.hpp"
#include "env/surrogate/surrogate_model.hpp"
#include "experiments/config/config.hpp"

namespace experiments {

// The surrogate of training at `path`, read and checked against `config`'s workload (data set,
// model, optimizer, global batch: what it was fitted on); a bad file or another workload fails at
// `key` of `r` (common::ConfigError, file:line). runtime.surrogate's and planned-t's surrogate.
std::shared_ptr<const env::SurrogateModel> read_workload_surrogate(common::YamlReader& r, const std::string& key, const std::string& path,
                                                                   const ExperimentConfig& config);

}  // namespace experiments
