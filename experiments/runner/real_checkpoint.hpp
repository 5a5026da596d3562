// Checkpoints of real runs, written by rank 0 after every finished epoch so that a run whose
// worker died can go on with `orchestra launch --resume`: the global model (rank 0's weights,
// equal on every rank after an epoch's last aggregation) and the results so far.
//
// Layout: <out>/checkpoints/<label>.pt (libtorch archive) and <label>.json (what was done), both
// replaced atomically. Not kept: the optimizers' momentum, local and outer (restarts at zero), and the policy's own
// state (the policy starts afresh on resume: LBB profiles again, LCM recomputes T).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "env/train/models.hpp"
#include "experiments/runner/run_loop.hpp"

namespace experiments {

std::string checkpoint_base(const std::string& out_dir, const std::string& label);

// Writes the model (when given) and then the meta, each atomically.
void save_checkpoint(const std::string& out_dir, const RunCheckpoint& checkpoint, env::Classifier* model);
// nullopt when there is none; throws common::DataError for an unreadable one.
std::optional<RunCheckpoint> load_checkpoint(const std::string& out_dir, const std::string& label);
void load_checkpoint_model(const std::string& out_dir, const std::string& label, env::Classifier& model);

}  // namespace experiments
