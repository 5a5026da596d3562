// Checkpoints of real runs, written by rank 0 after every finished epoch so that a run whose
// worker died can go on with `orchestra launch --resume`: the global model (rank 0's weights,
// equal on every rank after an epoch's last aggregation) and the results so far.
//
// Layout: <out>/checkpoints/<label>.pt (libtorch archive) and <label>.json (what was done), both
// replaced atomically. Not kept: the optimizers' momentum (restarts at zero) and the policy's own
// state (the policy starts afresh on resume: LBB profiles again, LCM recomputes T).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "env/models.hpp"
#include "experiments/policy_run.hpp"

namespace experiments {

// Run-level sums that PolicyOutcome does not keep but the final summary needs.
struct RunTotals {
  double straggler_sum = 0;  // over rounds
  double busy_ms = 0;        // over rounds and workers
};

struct RealCheckpoint {
  bool finished = false;     // the policy's run is complete: resume skips it
  int epochs_done = 0;
  std::int64_t rounds = 0;
  double clock_ms = 0;       // the run's clock at the end of the last finished epoch
  PolicyOutcome outcome;     // the results up to then
  RunTotals totals;
};

std::string checkpoint_base(const std::string& out_dir, const std::string& label);

// Writes the model (when given) and then the meta, each atomically.
void save_checkpoint(const std::string& out_dir, const RealCheckpoint& checkpoint, env::Classifier* model);
// nullopt when there is none; throws std::runtime_error for an unreadable one.
std::optional<RealCheckpoint> load_checkpoint(const std::string& out_dir, const std::string& label);
void load_checkpoint_model(const std::string& out_dir, const std::string& label, env::Classifier& model);

}  // namespace experiments
