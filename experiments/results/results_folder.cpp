#include "experiments/results/results_folder.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "common/errors.hpp"
#include "common/json_diff.hpp"

namespace experiments {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The files of an A3C training (`orchestra train`), and its folder of snapshots.
const char* const kTrainingFiles[] = {"train.csv", "checkpoint.pt", "policy.pt", "snapshots"};

bool holds_policy_folders(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec) && is_policy_folder(entry.path())) return true;
  return false;
}

bool is_empty_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec);
}

std::optional<json> identity_of(const fs::path& policy_dir) {
  const std::optional<json> config = recorded_config(policy_dir.string());
  if (!config) return std::nullopt;
  return experiment_identity(*config);
}

// The policy keys a policy folder's config.json records (null where it cannot be read).
json policy_params_of(const fs::path& policy_dir) {
  const std::optional<json> config = recorded_config(policy_dir.string());
  return config && config->contains("policy") ? (*config)["policy"] : json();
}

std::string text_of(const json& identity, const char* key) {
  if (!identity.is_object() || !identity.contains(key)) return "?";
  const json& v = identity[key];
  return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
}

// "results of experiment 'probe', seed 1 (this run: seed 9)", or of the same name and seed with
// another config: "(this run differs in training.lr (0.05, now 0.1))".
std::string describe_other(const json& theirs, const std::optional<json>& ours) {
  std::string text = "results of experiment " + text_of(theirs, "name") + ", seed " + text_of(theirs, "seed");
  if (!ours) return text;
  const bool same_name = text_of(theirs, "name") == text_of(*ours, "name"), same_seed = text_of(theirs, "seed") == text_of(*ours, "seed");
  if (!same_name || !same_seed) {
    std::string now;
    if (!same_name) now += "experiment " + text_of(*ours, "name");
    if (!same_seed) now += (now.empty() ? "" : ", ") + std::string("seed ") + text_of(*ours, "seed");
    return text + " (this run: " + now + ")";
  }
  return text + " with another config (this run: " + common::describe_differences(theirs, *ours, 3) + ")";
}

bool starts_with_marker(const fs::path& file, const std::string& marker) {
  std::ifstream in(file, std::ios::binary);
  std::string head(marker.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  return in.gcount() == static_cast<std::streamsize>(marker.size()) && head == marker;
}

void look(const fs::path& dir, const FolderPlan& plan, std::vector<FolderFinding>& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir, ec)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  static const std::regex seed_folder("seed-[0-9]+");
  std::vector<std::string> training;
  for (const auto& path : entries) {
    const std::string name = path.filename().string();
    if (name.empty() || name[0] == '.') continue;  // the lock, staging folders: a run's own hidden files
    const bool folder = fs::is_directory(path, ec);
    if (plan.training == FolderPlan::Training::Fresh &&
        std::find(std::begin(kTrainingFiles), std::end(kTrainingFiles), name) != std::end(kTrainingFiles)) {
      training.push_back(name);
      continue;
    }
    if (plan.labels.count(name)) {
      if (!folder) {
        out.push_back({path.string(), "a file where policy " + name + "'s results folder goes", false, {}});
      } else if (is_policy_folder(path)) {
        const std::optional<json> theirs = identity_of(path);
        if (!theirs) out.push_back({path.string(), "a policy folder whose config.json cannot be read", true, {}});
        else if (!plan.identity || *theirs != *plan.identity) out.push_back({path.string(), describe_other(*theirs, plan.identity), true, {}});
        else if (const auto ours = plan.policy_params.find(name); ours != plan.policy_params.end()) {
          const json recorded = policy_params_of(path);
          if (recorded != ours->second)
            out.push_back({path.string(), "results of policy " + name + " with other keys (this run: " + common::describe_differences(recorded, ours->second, 3) + ")", true, {}});
        }
      } else if (!is_empty_folder(path)) {
        out.push_back({path.string(), "a folder that holds no policy results, where policy " + name + "'s results go", false, {}});
      }
      continue;
    }
    if (const auto sub = plan.folders.find(name); sub != plan.folders.end()) {
      if (!folder) out.push_back({path.string(), "a file where this run writes a folder", false, {}});
      else look(path, sub->second, out);
      continue;
    }
    if (const auto own = std::find_if(plan.files.begin(), plan.files.end(), [&](const OwnFile& f) { return f.name == name; });
        own != plan.files.end()) {
      if (folder || !starts_with_marker(path, own->marker))
        out.push_back({path.string(), "a file this command did not write, where it writes " + name, false, {}});
      continue;
    }
    if (!folder) continue;
    if (is_policy_folder(path)) {
      const std::optional<json> theirs = identity_of(path);
      const std::string what = !theirs ? "a policy folder whose config.json cannot be read"
                               : plan.identity && *theirs == *plan.identity ? "results of a policy this run does not run"
                                                                            : describe_other(*theirs, plan.identity);
      out.push_back({path.string(), what, true, {}});
    } else if (fs::exists(path / "evaluate.yaml", ec)) {
      out.push_back({path.string(), "an evaluation's cluster (orchestra evaluate)", true, {}});
    } else if (std::regex_match(name, seed_folder) && holds_policy_folders(path)) {
      std::vector<std::string> log;
      if (fs::exists(path.string() + ".log", ec)) log.push_back(path.string() + ".log");
      out.push_back({path.string(), "a seed of a multi-seed run or evaluation that this run does not run (run --seeds, evaluate --seeds)", true, log});
    }
  }
  if (!training.empty()) {
    // --resume needs a checkpoint: a training stopped before its first has nothing to continue.
    const bool resumable = std::find(training.begin(), training.end(), "checkpoint.pt") != training.end();
    FolderFinding f{(dir / training.front()).string(),
                    resumable ? "an A3C training (orchestra train): continue it with --resume"
                              : "an A3C training stopped before its first checkpoint (nothing to resume)",
                    true, {}};
    for (std::size_t k = 1; k < training.size(); ++k) f.also_remove.push_back((dir / training[k]).string());
    out.push_back(f);
  }
}

std::string relative(const std::string& path, const std::string& dir) {
  const std::string rel = fs::path(path).lexically_relative(dir).string();
  return rel.empty() || rel.rfind("..", 0) == 0 ? path : rel;
}

// "dsgd, local-sgd (results of experiment 'probe', seed 1 ...); seed-4 (a seed of ...)": the
// findings grouped by what they are, in the order first found.
std::string describe(const std::vector<const FolderFinding*>& findings, const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> groups;  // what -> paths
  for (const FolderFinding* f : findings) {
    std::string names = relative(f->path, dir);
    for (const auto& also : f->also_remove) names += ", " + relative(also, dir);
    const auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == f->what; });
    if (g == groups.end()) groups.emplace_back(f->what, names);
    else g->second += ", " + names;
  }
  std::string text;
  for (const auto& [what, names] : groups) text += (text.empty() ? "" : "; ") + names + ": " + what;
  return text;
}

}  // namespace

std::optional<json> recorded_config(const std::string& policy_dir) {
  std::ifstream in(fs::path(policy_dir) / "config.json");
  if (!in) return std::nullopt;
  try {
    json config = json::parse(in);
    if (!config.is_object()) return std::nullopt;
    return config;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

json experiment_identity(const json& resolved_config) {
  json id = resolved_config;
  if (!id.is_object()) return id;
  for (const char* key : {"policy", "file", "real"}) id.erase(key);
  if (id.contains("runtime") && id["runtime"].is_object()) {
    nlohmann::json& runtime = id["runtime"];
    runtime.erase("threads");
    if (runtime.contains("surrogate_digest")) runtime.erase("surrogate");  // the surrogate counts by content, not path
  }
  return id;
}

std::vector<FolderFinding> look_at_folder(const std::string& dir, const FolderPlan& plan) {
  std::vector<FolderFinding> out;
  look(dir, plan, out);
  return out;
}

ResultsFolder::ResultsFolder(const std::string& dir, const FolderPlan& plan, bool overwrite, const std::string& overwrite_flag) : lock_(dir) {
  const std::vector<FolderFinding> findings = look_at_folder(dir, plan);
  std::vector<const FolderFinding*> kept, removable;
  for (const auto& f : findings) (f.removable ? removable : kept).push_back(&f);
  if (!kept.empty())
    throw common::FolderError(common::ExitCode::BadInput, dir + ": in the way of this run, and not results this toolkit removes: " + describe(kept, dir) +
                                                              ": move it, or choose another folder");
  if (removable.empty()) return;
  if (!overwrite)
    throw common::FolderError(common::ExitCode::BadInput, dir + ": holds other results: " + describe(removable, dir) + ". Choose another folder, or add " +
                                                              overwrite_flag + " to remove them (nothing else in " + dir + " is touched)");
  for (const FolderFinding* f : removable) {
    fs::remove_all(f->path);
    for (const auto& also : f->also_remove) fs::remove_all(also);
  }
  std::cerr << "orchestra: " << overwrite_flag << ": removed from " << dir << ": " << describe(removable, dir) << std::endl;
}

bool is_policy_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "summary.json", ec);
}

}  // namespace experiments
