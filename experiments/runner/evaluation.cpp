#include "experiments/runner/evaluation.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "agents/policy_file.hpp"
#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "common/names.hpp"
#include "common/number_text.hpp"
#include "experiments/analysis/plots.hpp"
#include "experiments/config/config_copy.hpp"
#include "experiments/registry/planned_barrier.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/results/round_series.hpp"
#include "experiments/runner/progress_reporter.hpp"
#include "experiments/runner/seed_runs.hpp"

namespace experiments {
namespace {

namespace fs = std::filesystem;

constexpr int kStepCap = 64;  // BarrierControllerOptions::max_local_steps' default

std::string cluster_name(const std::string& config_path) { return fs::path(config_path).stem().string(); }

// The policy's model average is part of the environment it was trained in: its baselines (the
// sweep, orchestra-lcm, the random controller) run with it too.
void add_weighting(YAML::Node& entry, const agents::PolicyControl& c) {
  if (c.weighting != env::AverageWeighting::Uniform) entry["weighting"] = env::weighting_name(c.weighting);
}

// The keys that make the judged policy's actions and windows, for the sweep and the random controller.
void add_control(YAML::Node& entry, const agents::PolicyControl& c, bool with_move) {
  if (with_move) {
    if (c.move == orchestra::BarrierMove::Multiplicative) {
      entry["move"] = "multiplicative";
      entry["factor"] = c.factor;
    } else {
      entry["move"] = "additive";
      entry["unit_ms"] = c.unit_ms;
    }
    if (c.min_barrier_ms > 0) entry["min_T_ms"] = c.min_barrier_ms;
    if (c.max_barrier_ms > 0) entry["max_T_ms"] = c.max_barrier_ms;
    if (c.min_barrier_x_start > 0) entry["min_T_x_start"] = c.min_barrier_x_start;
    if (c.max_barrier_x_start > 0) entry["max_T_x_start"] = c.max_barrier_x_start;
    if (c.floor_cap_steps > 0) entry["floor_cap_steps"] = c.floor_cap_steps;
    if (c.min_barrier_steps > 0) entry["min_T_steps"] = c.min_barrier_steps;
    if (c.lcm_cap_steps > 0) entry["T_cap_steps"] = c.lcm_cap_steps;
    if (c.lcm_cap_x_comm > 0) entry["T_cap_x_comm"] = c.lcm_cap_x_comm;
    if (c.lcm_cap_above_steps > 0) entry["T_cap_above_steps"] = c.lcm_cap_above_steps;
    if (c.max_move != 1) entry["max_move"] = c.max_move;
  }
  if (c.interval == orchestra::DecisionInterval::Rounds) {
    entry["interval"] = "rounds";
    entry["interval_rounds"] = c.interval_rounds;
  }
  add_weighting(entry, c);
}

// The random controller (the A3C ablation) deployed as the judged policy is: its moves and
// windows, and, where the policy starts at the plan and `cluster` can be planned by default, the
// plan's start with the bounds around it; elsewhere LCM's T*, as the policy falls back to.
YAML::Node random_entry(const agents::PolicyControl& c, const ExperimentConfig& cluster) {
  YAML::Node random;
  random["name"] = "orchestra-random";
  add_control(random, c, true);
  if (c.start != agents::BarrierStart::Planned) return random;
  // Where the policy cannot plan, it starts at LCM's T* and says why (a3c_policy.hpp); so does the
  // random controller, in its own config.json.
  if (const std::string why = why_default_plan_unavailable(cluster); !why.empty()) {
    random["start_fallback"] = "the judged policy starts at a planned T, but " + why + ": LCM's T* instead, as the policy does";
    return random;
  }
  random["start"] = agents::barrier_start_name(c.start);
  if (c.planned_min_barrier_x_start > 0) random["planned_min_T_x_start"] = c.planned_min_barrier_x_start;
  if (c.planned_max_barrier_x_start > 0) random["planned_max_T_x_start"] = c.planned_max_barrier_x_start;
  return random;
}

std::string sweep_label(double ms) {
  std::ostringstream s;
  s << "fixed-t-T_ms=" << ms;
  return s.str();
}

std::string entry_kind(const YAML::Node& entry) { return entry.IsMap() ? entry["name"].as<std::string>() : entry.as<std::string>(); }
std::string entry_label(const YAML::Node& entry) {
  return entry.IsMap() && entry["label"] ? entry["label"].as<std::string>() : entry_kind(entry);
}

// A point of the sweep of static barriers, by its label: a judged fixed-t (--also) is not one.
bool is_sweep_point(const YAML::Node& entry) {
  return entry.IsMap() && entry_kind(entry) == "fixed-t" && entry["T_ms"] && entry_label(entry) == sweep_label(entry["T_ms"].as<double>());
}

// What an evaluation judges the policies against: orchestra-lcm, the random controller, the sweep.
// The first two under their own names: an `--also '{name: orchestra-lcm, label: ...}'` was judged.
bool is_baseline(const YAML::Node& entry) {
  const std::string kind = entry_kind(entry);
  return ((kind == "orchestra-lcm" || kind == "orchestra-random") && entry_label(entry) == kind) || is_sweep_point(entry);
}

// The controllers judged, as entries of an experiment's policies: list: the policies, then the
// --also entries (a fixed-t or planned-t among them with the policy's decision interval, as the
// sweep has it).
YAML::Node judged_entries(const EvaluateOptions& options, const agents::PolicyControl& control) {
  YAML::Node judged(YAML::NodeType::Sequence);
  for (std::size_t i = 0; i < options.policies.size(); ++i) {
    YAML::Node entry;
    entry["name"] = "orchestra-a3c";
    entry["label"] = policy_label(options.policies, i);
    entry["policy"] = fs::absolute(options.policies[i]).lexically_normal().string();
    judged.push_back(entry);
  }
  for (const auto& text : options.also) {
    YAML::Node entry;
    try {
      entry = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw common::UsageError("--also " + text + ": not a policy entry (" + e.msg + ")");
    }
    if (!(entry.IsScalar() || (entry.IsMap() && entry["name"] && entry["name"].IsScalar())))
      throw common::UsageError("--also " + text + ": expected a policy name or a map with name: (e.g. '{name: fixed-t, T_x_comm: 1}')");
    // planned-t plans on the sweep's options: the sweep's interval makes its pick the sweep's T.
    if (entry.IsScalar() && entry.Scalar() == "planned-t") {
      entry = YAML::Node(YAML::NodeType::Map);
      entry["name"] = "planned-t";
    }
    const bool static_t = entry.IsMap() && (entry_kind(entry) == "fixed-t" || entry_kind(entry) == "planned-t");
    if (static_t && !entry["interval"]) add_control(entry, control, false);
    judged.push_back(entry);
  }
  return judged;
}

// The config file with the evaluation's policies in place of its own.
YAML::Node evaluation_config(const std::string& path, const ExperimentConfig& cluster, const EvaluateOptions& options,
                             const std::vector<agents::PolicyControl>& controls, const std::vector<double>& sweep) {
  YAML::Node root = YAML::LoadFile(path);
  root["name"] = cluster_name(path);
  root["training"]["stop_at_target"] = true;
  if (options.workload.epochs) root["training"]["epochs"] = *options.workload.epochs;
  if (options.workload.target_accuracy) root["training"]["target_accuracy"] = common::shortest_number_text(*options.workload.target_accuracy);
  YAML::Node seeds(YAML::NodeType::Sequence);
  for (std::uint64_t s : options.seeds) seeds.push_back(s);
  root["seeds"] = seeds;
  anchor_relative_paths(root, path);  // the copy is written in the evaluation's folder
  YAML::Node policies = judged_entries(options, controls.front());
  YAML::Node lcm;
  lcm["name"] = "orchestra-lcm";
  add_weighting(lcm, controls.front());
  policies.push_back(lcm.size() > 1 ? lcm : YAML::Node("orchestra-lcm"));
  policies.push_back(random_entry(controls.front(), cluster));
  for (double ms : sweep) {
    YAML::Node entry;
    entry["name"] = "fixed-t";
    entry["label"] = sweep_label(ms);
    entry["T_ms"] = ms;
    add_control(entry, controls.front(), false);
    policies.push_back(entry);
  }
  root["policies"] = policies;
  return root;
}

// The keys of an entry that make its moves and windows (add_control), as text, for comparing a
// reused evaluation's baselines with the judged policy's recorded control.
std::map<std::string, std::string> control_keys(const YAML::Node& entry) {
  static const char* const kKeys[] = {"move", "factor", "max_move", "unit_ms", "min_T_ms", "max_T_ms", "min_T_x_start", "max_T_x_start", "floor_cap_steps",
                                      "min_T_steps", "T_cap_steps", "T_cap_x_comm", "T_cap_above_steps",
                                      "interval", "interval_rounds", "weighting", "start", "planned_min_T_x_start", "planned_max_T_x_start"};
  std::map<std::string, std::string> keys;
  if (!entry.IsMap()) return keys;
  for (const char* key : kKeys)
    if (entry[key] && entry[key].IsScalar()) {
      std::string value = entry[key].Scalar();
      try {  // numbers by value: 2 and 2.0 are one factor
        std::ostringstream number;
        number << std::setprecision(12) << entry[key].as<double>();
        value = number.str();
      } catch (const YAML::Exception&) {
      }
      keys[key] = value;
    }
  return keys;
}

std::string describe_control(const std::map<std::string, std::string>& keys) {
  if (keys.empty()) return "the defaults (decisions every epoch)";
  std::string text;
  for (const auto& [key, value] : keys) text += (text.empty() ? "" : ", ") + key + ": " + value;
  return text;
}

// One cluster of the evaluation: the file its runs read, and with --baselines-from the file that
// replaces it once the policies have run (every controller, so that the folder reads as a whole).
// Everything is worked out and validated before the first file is written (write_cluster_files).
struct ClusterPlan {
  std::string name;
  std::string file;
  std::string text;           // what `file` holds while the runs run
  std::string complete_text;  // with --baselines-from: what it holds afterwards
  std::vector<std::uint64_t> seeds;
  std::vector<std::pair<fs::path, fs::path>> copies;  // --baselines-from: run folders copied in, from -> to
  FolderPlan folder;          // what the cluster's folder will hold (results_folder.hpp)
};

constexpr const char* kEvaluateMarker = "# written by orchestra evaluate from ";

std::string emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

// The cluster's folder as its runs will leave it: seed-<N>/ with every controller of `complete`.
FolderPlan cluster_folder_plan(const std::string& complete_text, const std::string& file, const std::vector<std::uint64_t>& seeds) {
  ExperimentConfig config = parse_config(complete_text, file);
  config.seeds = seeds;
  RunOptions run;
  run.seeds = seeds;
  FolderPlan plan = seeds_folder_plan(config, run);
  plan.files.push_back({"evaluate.yaml", kEvaluateMarker});
  return plan;
}

// A cluster is named after its config file (DIR/<cluster>/): the name must be a name.
std::string checked_cluster_name(const std::string& name, const std::string& source) {
  if (const auto problem = common::name_problem(name))
    throw common::UsageError(source + ": evaluate names a cluster's folder after its config file, and this one's name, " + common::quoted_name(name) +
                             ", " + *problem + ": rename it");
  // The names of what evaluate writes beside the clusters' folders: a cluster of one of them failed
  // after every run (evaluation.md) or put the figures inside its results (plots).
  for (const char* own : {"plots", "evaluation.md", "evaluation.csv", "evaluation_overall.csv"})
    if (name == own)
      throw common::UsageError(source + ": evaluate names a cluster's folder after its config file, and '" + name +
                               "' is the name of what evaluate writes beside them: rename it");
  return name;
}

// Each --also entry built as a policy of `config`: a bad key is said as the flag's, not as a line of
// a generated evaluate.yaml.
void check_also_entries(const EvaluateOptions& options, const agents::PolicyControl& control, ExperimentConfig config) {
  const YAML::Node judged = judged_entries(options, control);
  config.file = "--also";
  for (std::size_t k = 0; k < options.also.size(); ++k) {
    const YAML::Node node = judged[options.policies.size() + k];
    PolicyConfig entry;
    entry.kind = entry_kind(node);
    entry.label = entry_label(node);
    entry.params = node.IsMap() ? node : YAML::Node(YAML::NodeType::Map);
    entry.source = node;
    try {
      ExperimentConfig one = config;
      one.policies = {entry};
      expand_sweeps(one);
      // A list value is a sweep: its runs are written under generated labels
      // (fixed-t-T_ms=50, ...) that the tables, which read one folder per entry, never find; the
      // tables failed after every run had run.
      if (one.policies.size() != 1)
        throw common::ConfigError("--also: a list value is a sweep of " + std::to_string(one.policies.size()) +
                                  " policies; evaluate judges one policy per --also: give each value its own --also");
      for (const auto& p : one.policies) make_policy(p, one);
    } catch (const common::ConfigError& e) {
      std::string why = e.what();  // "--also:1: policies...: message" or "--also:1: H: message"
      if (why.rfind("--also", 0) == 0) why = why.substr(why.find(": ") + 2);
      throw common::UsageError("--also " + options.also[k] + ": " + why);
    }
  }
}

// Every config read, and its evaluate.yaml worked out and validated, before the first file is written.
std::vector<ClusterPlan> plan_full_evaluation(const EvaluateOptions& options, const std::vector<agents::PolicyControl>& controls) {
  std::set<std::string> names;
  std::vector<ClusterPlan> plans;
  for (const auto& path : options.configs) {
    const std::string name = checked_cluster_name(cluster_name(path), path);
    const ExperimentConfig config = load_config(path);
    if (config.mode != ClusterMode::Simulated) throw common::ConfigError(path + ": evaluate runs simulated clusters (cluster.mode: simulated)");
    if (!names.insert(name).second) throw common::UsageError("two cluster configs named " + name + ": rename one");
    const std::vector<double> sweep = options.sweep_ms.empty() ? barrier_sweep(config, options.sweep_points) : options.sweep_ms;
    const fs::path dir = fs::path(options.out_dir) / name;
    ClusterPlan plan{name, (dir / "evaluate.yaml").string(), "", "", options.seeds, {}, {}};
    plan.text = kEvaluateMarker + path + "\n" + emit(evaluation_config(path, config, options, controls, sweep));
    if (plans.empty()) check_also_entries(options, controls.front(), config);
    plan.folder = cluster_folder_plan(plan.text, plan.file, plan.seeds);  // the generated policies are valid before anything runs
    plans.push_back(std::move(plan));
  }
  return plans;
}

// A baseline's results folder copied from the earlier evaluation (staged, then renamed into place),
// its summary.json saying where it came from. A failure removes the staging folder again.
void copy_run_folder(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  std::string name = (to.parent_path() / ("." + to.filename().string() + ".copy-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(name.data())) throw std::runtime_error(to.parent_path().string() + ": cannot create a staging folder");
  const fs::path staging = name;
  try {
    const mode_t mask = ::umask(0);  // mkdtemp makes it 0700: give it what a plain mkdir would
    ::umask(mask);
    fs::permissions(staging, fs::perms::all & ~static_cast<fs::perms>(mask));
    fs::copy(from, staging, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    nlohmann::json summary = common::read_json_file((from / "summary.json").string());
    summary["copied_from"] = fs::absolute(from).lexically_normal().string();
    common::write_file_atomic((staging / "summary.json").string(), summary.dump(2) + "\n");
    // In place of this label's earlier results (the claim on the folder checked whose they are).
    common::replace_folder(staging.string(), to.string());
  } catch (...) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    throw;
  }
}

// The files of each cluster, once the folder is claimed.
void write_cluster_files(const std::vector<ClusterPlan>& plans) {
  for (const auto& plan : plans) {
    fs::create_directories(fs::path(plan.file).parent_path());
    for (const auto& [from, to] : plan.copies) copy_run_folder(from, to);
    common::write_file_atomic(plan.file, plan.text);
  }
}

// --baselines-from FROM: FROM's clusters, seeds and sweep; its orchestra-lcm, random and fixed-t
// runs copied; only the policies run. The baselines must have run with the first policy's moves and
// decision interval, as a full evaluation would have run them.
std::vector<ClusterPlan> plan_from_baselines(const EvaluateOptions& options, const std::vector<agents::PolicyControl>& controls) {
  const fs::path from = options.baselines_from;
  if (!options.configs.empty()) throw common::UsageError("--baselines-from takes the clusters from " + from.string() + ": give no CONFIG files");
  if (!fs::is_directory(from)) throw common::DataError(from.string() + ": no such folder");
  if (fs::exists(options.out_dir) && fs::equivalent(from, options.out_dir))
    throw common::UsageError("--baselines-from " + from.string() + " and --out are one folder: give another --out");
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(from))
    if (entry.is_directory() && fs::exists(entry.path() / "evaluate.yaml")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) throw common::DataError(from.string() + ": not an evaluation (no <cluster>/evaluate.yaml)");
  YAML::Node expected_static, expected_lcm;
  add_control(expected_static, controls.front(), false);
  add_weighting(expected_lcm, controls.front());
  std::vector<ClusterPlan> plans;
  for (const auto& src : dirs) {
    const std::string source = (src / "evaluate.yaml").string();
    YAML::Node root;
    try {
      root = YAML::LoadFile(source);
    } catch (const YAML::Exception& e) {
      throw common::DataError(source + ": not readable as an evaluation's config (" + e.msg + ")");
    }
    const ExperimentConfig earlier = parse_config(emit(root), source);
    const YAML::Node expected_random = random_entry(controls.front(), earlier);
    if (plans.empty()) check_also_entries(options, controls.front(), earlier);
    YAML::Node baselines(YAML::NodeType::Sequence);
    for (const auto& entry : root["policies"]) {
      const std::string kind = entry_kind(entry);
      if (!is_baseline(entry)) continue;  // the earlier judged controllers are not copied
      const YAML::Node& expected = kind == "orchestra-random" ? expected_random : kind == "orchestra-lcm" ? expected_lcm : expected_static;
      if (control_keys(entry) != control_keys(expected))
        throw common::ConfigError(source + ": " + entry_label(entry) + " ran with " + describe_control(control_keys(entry)) + ", but " +
                                  options.policies.front() + " records " + describe_control(control_keys(expected)) +
                                  ": run the full evaluation instead of --baselines-from");
      baselines.push_back(entry);
    }
    ClusterPlan plan;
    plan.name = checked_cluster_name(src.filename().string(), src.string());
    for (const auto& s : root["seeds"]) plan.seeds.push_back(s.as<std::uint64_t>());
    const fs::path dir = fs::path(options.out_dir) / plan.name;
    plan.file = (dir / "evaluate.yaml").string();
    for (std::uint64_t seed : plan.seeds)
      for (const auto& entry : baselines) {
        const fs::path run = fs::path("seed-" + std::to_string(seed)) / entry_label(entry);
        if (!fs::exists(src / run / "summary.json"))
          throw common::DataError((src / run).string() + ": no summary.json (an evaluation that did not finish?): run the full evaluation instead");
        plan.copies.emplace_back(src / run, dir / run);
      }
    const std::string header = kEvaluateMarker + source + ": the judged controllers ran here, the baselines' runs were copied from there\n";
    YAML::Node all = judged_entries(options, controls.front());
    for (const auto& entry : baselines) all.push_back(entry);
    root["policies"] = all;
    plan.complete_text = header + emit(root);
    root["policies"] = judged_entries(options, controls.front());  // what runs now
    plan.text = header + emit(root);
    parse_config(plan.text, plan.file);
    plan.folder = cluster_folder_plan(plan.complete_text, plan.file, plan.seeds);
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace

std::vector<double> barrier_sweep(const ExperimentConfig& config, int points) {
  const auto& workers = config.cluster.workers;
  if (workers.empty() || points < 1) return {};
  const int equal = std::max(1, config.global_batch / static_cast<int>(workers.size()));
  double slowest = 0;
  for (const auto& w : workers) slowest = std::max(slowest, w.time_model->eval(std::min(equal, w.max_batch)));
  const double lo = slowest, hi = kStepCap * slowest;
  std::vector<double> sweep;
  for (int k = 0; k < points; ++k) {
    const double t = points == 1 ? lo : lo * std::pow(hi / lo, static_cast<double>(k) / (points - 1));
    const double rounded = std::round(t);  // whole ms: the labels stay readable
    if (sweep.empty() || rounded > sweep.back()) sweep.push_back(rounded);
  }
  return sweep;
}

std::string policy_label(const std::vector<std::string>& paths, std::size_t index) {
  if (paths.size() == 1) return "orchestra-a3c";
  const fs::path p = paths[index];
  const std::string parent = p.parent_path().filename().string();
  return "a3c:" + (p.stem() == "policy" && !parent.empty() ? parent : p.stem().string());
}

EvaluationResult run_evaluation(const EvaluateOptions& options) {
  if (options.policies.empty()) throw common::UsageError("evaluate needs at least one policy file (POLICY.pt)");
  if (options.configs.empty() && options.baselines_from.empty())
    throw common::UsageError("evaluate needs at least one cluster config (CONFIG.yaml) or --baselines-from DIR");
  // The baselines copied ran on the earlier evaluation's workload: the policies must run on it too.
  if (!options.baselines_from.empty() && !options.workload.empty())
    throw common::UsageError("--baselines-from runs the policies on " + options.baselines_from + "'s workload: drop --epochs and --target");
  std::vector<agents::PolicyControl> controls;
  for (const auto& path : options.policies) controls.push_back(agents::A3cPolicy::load(path).control());  // DataError naming the file
  // The baselines run in one environment: the first policy's model average.
  for (std::size_t k = 1; k < controls.size(); ++k)
    if (controls[k].weighting != controls.front().weighting)
      throw common::UsageError(options.policies[k] + " was trained with weighting " + env::weighting_name(controls[k].weighting) + " but " +
                               options.policies.front() + " with " + env::weighting_name(controls.front().weighting) +
                               ": their baselines differ, so evaluate them separately");
  // Every judged controller under its own name, none of them a baseline's.
  std::set<std::string> labels{"orchestra-lcm", "orchestra-random", "fixed-t-other-seeds"};
  const YAML::Node judged = judged_entries(options, controls.front());
  for (std::size_t k = 0; k < judged.size(); ++k) {
    const std::string label = entry_label(judged[k]);
    const std::string source = k < options.policies.size() ? options.policies[k] : "--also " + options.also[k - options.policies.size()];
    if (const auto problem = policy_label_problem(label))
      throw common::UsageError(source + ": judged as " + common::quoted_name(label) + ", which names its results folder and " + *problem +
                               (k < options.policies.size() ? ": move the policy file into a folder of another name" : ": give the entry a label:"));
    if (label.rfind("fixed-t-T_ms=", 0) == 0 || !labels.insert(label).second)
      throw common::UsageError("two controllers would be judged under one name (" + label +
                               "): give policy files in differently named folders, or an --also entry its own label:");
  }
  if (options.plot) find_gnuplot("gnuplot");  // no gnuplot: said before the runs, not after them
  const std::vector<ClusterPlan> plans =
      options.baselines_from.empty() ? plan_full_evaluation(options, controls) : plan_from_baselines(options, controls);
  // Everything is valid: the folder is claimed (one owner; nothing of another evaluation or
  // experiment mixed in), then written.
  FolderPlan whole;
  for (const auto& plan : plans) whole.folders[plan.name] = plan.folder;
  // Its tables replace only earlier tables of an evaluation: a user's evaluation.md was replaced.
  whole.files = {{"evaluation.md", kEvaluationMarkdownMarker}, {"evaluation.csv", kEvaluationCsvMarker},
                 {"evaluation_overall.csv", kEvaluationOverallCsvMarker}};
  if (options.plot) check_plots_folder((fs::path(options.out_dir) / "plots").string());  // before the runs, not after
  const ResultsFolder folder(options.out_dir, whole, options.overwrite);
  write_cluster_files(plans);
  // Progress on stderr, one cluster at a time (its seeds run in run_seeds, quietly).
  ProgressReporter progress(ProgressReporter::style_for(stderr, options.quiet), stderr,
                            options.quiet ? ProgressTiming{} : ProgressTiming::from_environment());
  progress.start("evaluate", "clusters", static_cast<double>(plans.size()), 0, false);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    progress.update(static_cast<double>(i), {{"running", plans[i].name}, {"seeds", std::to_string(plans[i].seeds.size())}});
    RunOptions run;
    run.out_dir = (fs::path(options.out_dir) / plans[i].name).string();
    run.seeds = plans[i].seeds;
    run.jobs = options.jobs;
    run.quiet = true;
    run_seeds(load_config(plans[i].file), run);  // the file just written, so that --jobs can run it
    if (!plans[i].complete_text.empty()) common::write_file_atomic(plans[i].file, plans[i].complete_text);
  }
  progress.update(static_cast<double>(plans.size()));
  progress.finish();
  EvaluationResult result;
  result.out_dir = options.out_dir;
  result.runs = read_evaluation_runs(options.out_dir);
  result.summary = summarize_evaluation(result.runs);
  write_evaluation_tables(options.out_dir, result.summary, result.runs);
  if (options.plot) result.figures = plot_evaluation(options.out_dir, result.summary, policy_label(options.policies, 0));
  return result;
}

std::vector<std::string> write_evaluation_tables(const std::string& out_dir, const EvaluationSummary& summary,
                                                 const std::vector<ControllerRun>& runs) {
  const std::vector<std::pair<std::string, std::string>> tables = {
      {"evaluation.md", evaluation_markdown(summary)},
      {"evaluation.csv", evaluation_csv(summary, runs)},
      {"evaluation_overall.csv", evaluation_overall_csv(summary)},
  };
  std::vector<std::string> written;
  for (const auto& [name, text] : tables) {
    written.push_back((fs::path(out_dir) / name).string());
    common::write_file_atomic(written.back(), text);
  }
  return written;
}

std::vector<std::string> plot_evaluation(const std::string& out_dir, const EvaluationSummary& summary, const std::string& controller,
                                         PlotOptions options) {
  std::vector<BarrierTrace> traces;
  for (const auto& cluster : summary.clusters) {
    if (cluster.oracle_s.empty()) continue;  // no sweep point reached the target
    const std::uint64_t seed = cluster.oracle_s.begin()->first;  // the first seed with an oracle
    const fs::path rounds = fs::path(out_dir) / cluster.cluster / ("seed-" + std::to_string(seed)) / controller / "rounds.csv";
    if (!fs::exists(rounds)) continue;
    const RoundSeries series = read_rounds_csv(rounds.string());
    BarrierTrace trace;
    trace.cluster = cluster.cluster + " (seed " + std::to_string(seed) + ")";
    for (std::size_t k = 0; k < series.round.size(); ++k) {
      trace.clock_s.push_back(series.clock_ms[k] / 1000.0);
      trace.barrier_ms.push_back(series.barrier_ms[k]);
    }
    trace.oracle_barrier_ms = cluster.oracle_barrier_ms.at(seed);
    trace.oracle_time_s = cluster.oracle_s.at(seed);
    traces.push_back(std::move(trace));
  }
  if (options.out_dir.empty()) options.out_dir = (fs::path(out_dir) / "plots").string();
  // gnuplot refuses a histogram without one finite bar ("x range is invalid").
  bool any_ratio = false;
  for (const auto& cluster : summary.clusters)
    for (const auto& score : cluster.controllers) any_ratio = any_ratio || score.geomean_ratio > 0;
  std::vector<Figure> figures;
  if (any_ratio) figures.push_back(evaluation_figure(summary, "evaluation"));
  if (!traces.empty()) figures.push_back(barrier_vs_oracle_figure(traces, controller, "barrier_vs_oracle"));
  if (figures.empty()) return {};
  return draw_figures(figures, options).files;
}

std::vector<ControllerRun> read_evaluation_runs(const std::string& out_dir) {
  if (!fs::is_directory(out_dir)) throw common::DataError(out_dir + ": no such folder");
  std::vector<fs::path> clusters;
  for (const auto& entry : fs::directory_iterator(out_dir))
    if (entry.is_directory() && fs::exists(entry.path() / "evaluate.yaml")) clusters.push_back(entry.path());
  std::sort(clusters.begin(), clusters.end());
  if (clusters.empty()) throw common::DataError(out_dir + ": not an evaluation (no <cluster>/evaluate.yaml)");
  std::vector<ControllerRun> runs;
  for (const auto& dir : clusters) {
    // An evaluate.yaml edited or cut short: its file and line, not yaml-cpp's words alone.
    const std::string file = (dir / "evaluate.yaml").string();
    YAML::Node config;
    std::vector<std::uint64_t> seeds;
    std::vector<std::pair<std::string, double>> entries;  // label, the sweep point's T (0: a controller)
    try {
      config = YAML::LoadFile(file);
      for (const auto& s : config["seeds"]) seeds.push_back(s.as<std::uint64_t>());
      for (const auto& entry : config["policies"]) entries.emplace_back(entry_label(entry), is_sweep_point(entry) ? entry["T_ms"].as<double>() : 0.0);
    } catch (const YAML::Exception& e) {
      throw common::DataError(file + ":" + std::to_string(e.mark.line + 1) + ": not readable as an evaluation's config (" + e.msg + ")");
    }
    for (std::uint64_t seed : seeds)
      for (const auto& [label, sweep_ms] : entries) {
        ControllerRun run;
        run.cluster = dir.filename().string();
        run.seed = seed;
        run.controller = label;
        if (sweep_ms > 0) {
          run.role = ControllerRole::Sweep;
          run.barrier_ms = sweep_ms;
        }
        const PolicyResults r = read_policy_folder((dir / ("seed-" + std::to_string(seed)) / run.controller).string());
        run.time_to_target_s = r.time_to_target_s;
        run.run_time_s = r.sim_time_s;
        run.final_accuracy = r.final_accuracy;
        runs.push_back(run);
      }
  }
  return runs;
}

}  // namespace experiments
