// A results folder has one owner, and a run replaces only its own results. Before a command that
// writes results (run, run --seeds, launch, evaluate, train, draw, calibrate) does any work, it
// claims its folder: the lock (common/folder_lock.hpp), then a look at what is there against what
// the run is about to write (a FolderPlan):
//
//   - policy folders of the same experiment (the config each records, as far as it names the
//     experiment: experiment_identity) under a label this run writes, with the same policy keys:
//     an earlier run of this experiment, replaced policy by policy as the run goes;
//   - another experiment's results (policy folders of another config or seed, or of a policy this
//     run does not run, a multi-seed run's seed-<N>/, an evaluation's cluster, an A3C training):
//     refused, saying what they are, unless --overwrite, which removes exactly those and nothing
//     else;
//   - a file or folder that is no results at all, where this run would write (a user's folder
//     named like a label, a config named like a file this run writes): always refused;
//   - anything else (a user's notes, the figures of compare --plot) is left alone.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <filesystem>
#include "common/folder_lock.hpp"

namespace experiments {

// The resolved config a policy folder records (config.json) as far as it says which experiment
// ran: without "policy" (each policy's own keys, under its label), "file" (where the config was
// read), "real" (a launch's backend and timeout) and runtime.threads (how fast it ran, not what);
// a surrogate by its content (runtime.surrogate_digest), not its path (runtime.surrogate).
// Two runs with the same identity are the same experiment; a resumed run must match its checkpoint's.
nlohmann::json experiment_identity(const nlohmann::json& resolved_config);

// The resolved config a policy folder records (its config.json), or nullopt where there is none or
// it is not a JSON object (results written by hand, a damaged file: the callers then do not check).
std::optional<nlohmann::json> recorded_config(const std::string& policy_dir);

// A file this run writes in the folder: an existing file of that name is replaced only if it
// starts with `marker` (the same command wrote it).
struct OwnFile {
  std::string name;
  std::string marker;
};

// What a run writes into a folder.
struct FolderPlan {
  std::optional<nlohmann::json> identity;     // the experiment its policy folders record (experiment_identity)
  std::set<std::string> labels;               // its policy folders here
  // Each label's own keys (config.json's "policy", defaults filled in), where known: a folder of
  // this experiment under that label with other keys (local-sgd's H 2, now 4) is another result.
  std::map<std::string, nlohmann::json> policy_params;
  std::map<std::string, FolderPlan> folders;  // sub-folders it writes into: seed-<N>/, an evaluation's <cluster>/
  std::vector<OwnFile> files;                 // files it writes here that a user may have a file of the same name as
  // An A3C training's files here (train.csv, checkpoint.pt, policy.pt, snapshots/): Fresh, a new
  // training that would replace them (so they are another training's); Resume, this training's
  // own (train --resume); None, not this run's business.
  enum class Training { None, Fresh, Resume };
  Training training = Training::None;
};

// What stands in a run's way, found by look_at_folder.
struct FolderFinding {
  std::string path;
  std::string what;        // "results of experiment 'probe', seed 1", "a multi-seed run", ...
  bool removable = false;  // another experiment's results (--overwrite removes them); else never touched
  std::vector<std::string> also_remove;  // beside it, when removed (a seed's log)
};

// A folder one policy's run wrote: it holds summary.json.
bool is_policy_folder(const std::filesystem::path& dir);

// Every finding in `dir` against `plan`, in name order (nothing when `dir` does not exist).
std::vector<FolderFinding> look_at_folder(const std::string& dir, const FolderPlan& plan);

// The claim: held for the whole run, released (and the lock file gone) when it ends.
class ResultsFolder {
 public:
  // Locks `dir`, then refuses (common::FolderError, one line saying what is there and what to do)
  // when look_at_folder finds anything; with `overwrite`, removes what is removable and refuses
  // only the rest. `overwrite_flag` is how the command spells the option, for the message.
  ResultsFolder(const std::string& dir, const FolderPlan& plan, bool overwrite, const std::string& overwrite_flag = "--overwrite");
  const std::string& dir() const { return lock_.dir(); }

 private:
  common::FolderLock lock_;
};

}  // namespace experiments
