// Checkpoints of real runs, written by rank 0 after every finished epoch so that a run whose
// worker died can go on with `orchestra launch --resume`: the global model (rank 0's weights,
// equal on every rank after an epoch's last aggregation) and the results so far.
//
// Layout: <out>/checkpoints/<label>.pt (libtorch archive) and <label>.json (what was done, and the
// resolved config it was done with, as the policy's config.json has it), both replaced atomically.
// A resume checks that config against its own (check_resume) before any rank starts: a checkpoint
// of another model would not even load, and one of another lr or budget would go on silently with
// results that no config describes. Not kept: the optimizers' momentum, local and outer (restarts at zero), and the policy's own
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

// Writes the model (when given) and then the meta with `resolved_config`, each atomically.
void save_checkpoint(const std::string& out_dir, const RunCheckpoint& checkpoint, env::Classifier* model, const nlohmann::json& resolved_config);
// nullopt when there is none; throws common::DataError for an unreadable one.
std::optional<RunCheckpoint> load_checkpoint(const std::string& out_dir, const std::string& label);
void load_checkpoint_model(const std::string& out_dir, const std::string& label, env::Classifier& model);

// What a resume compares: the experiment's identity (results_folder.hpp) and the policy's keys.
nlohmann::json resume_identity(const nlohmann::json& resolved_config);

// Throws common::ConfigError when `label`'s checkpoint in `out_dir` was written with another
// config than `resolved_config` (naming the keys that differ and how), or by a version that did not
// record its config. Nothing when there is no checkpoint of `label`.
void check_resume(const std::string& out_dir, const std::string& label, const nlohmann::json& resolved_config);
// Throws common::DataError when `label`'s unfinished checkpoint cannot be read or its model loaded
// into `model` (a fresh one of the config's): said once, before any rank starts, where rank 0's
// failure to load it ended the run after every worker had started and read its data.
void check_resume_loads(const std::string& out_dir, const std::string& label, env::Classifier& model);
// Throws common::UsageError when `label`'s checkpoint paths in `out_dir` (checkpoints/LABEL.json,
// .pt) hold files that are not a checkpoint's: a new run replaces only its own kind, never a
// user's notes that happen to carry a policy's name.
void check_checkpoints_replaceable(const std::string& out_dir, const std::string& label);

}  // namespace experiments
