#include "experiments/surrogate/fidelity_run.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <yaml-cpp/yaml.h>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/yaml_file.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "experiments/config/config.hpp"
#include "experiments/config/config_copy.hpp"
#include "experiments/runner/evaluation.hpp"

namespace experiments {

namespace fs = std::filesystem;

std::string surrogate_variant(const std::string& config_path, const std::string& surrogate) {
  // The user's file is read here before the variant is: its errors name it, not the variant.
  YAML::Node root = common::read_yaml_file(config_path);
  if (!root.IsMap()) throw common::ConfigError(config_path + ": expected a mapping of keys (name:, cluster:, ...)");
  for (const char* key : {"data", "runtime"})
    if (root[key] && !root[key].IsMap())
      throw common::ConfigError(config_path + ":" + std::to_string(root[key].Mark().line + 1) + ": " + key + ": expected a mapping of keys");
  anchor_relative_paths(root, config_path);
  root["runtime"]["training"] = "surrogate";
  root["runtime"]["surrogate"] = fs::absolute(surrogate).lexically_normal().string();
  YAML::Emitter out;
  out << root;
  return "# " + config_path + " on the surrogate of training (orchestra surrogate fidelity)\n" + std::string(out.c_str()) + "\n";
}

namespace {

std::string workload_text(const Budget& budget) {
  char text[96];
  std::snprintf(text, sizeof text, "a target of %g within %d epoch%s", budget.target_accuracy, budget.epochs, budget.epochs == 1 ? "" : "s");
  return text;
}

// A reused real evaluation of `config` (its <cluster>/evaluate.yaml, where it has one) ran on the
// workload the surrogate's runs of it will: the same epochs and target.
void check_real_workload(const std::vector<std::string>& real_dirs, const std::string& config, const ExperimentConfig& variant,
                         const WorkloadChange& change) {
  Budget expected = variant.budget;
  if (change.epochs) expected.epochs = *change.epochs;
  if (change.target_accuracy) expected.target_accuracy = *change.target_accuracy;
  for (const auto& dir : real_dirs) {
    const fs::path ran = fs::path(dir) / fs::path(config).stem() / "evaluate.yaml";
    if (!fs::exists(ran)) continue;
    const Budget real = load_config(ran.string()).budget;
    if (real.epochs != expected.epochs || real.target_accuracy != expected.target_accuracy)
      throw common::DataError(ran.string() + ": the real runs went to " + workload_text(real) + ", the surrogate's of " + config +
                              " would go to " + workload_text(expected) + ": give --epochs and --target as the real evaluation ran");
  }
}

// A --real folder is an evaluation of real training: the `surrogate` folder of an earlier fidelity
// run, given instead, compared the surrogate with itself and reported an error of 0.
void check_trained_for_real(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path ran = entry.path() / "evaluate.yaml";
    if (!entry.is_directory(ec) || !fs::exists(ran, ec)) continue;
    const YAML::Node root = common::read_yaml_file(ran.string());
    const YAML::Node training = root.IsMap() && root["runtime"] && root["runtime"].IsMap() ? root["runtime"]["training"] : YAML::Node();
    if (training && training.IsScalar() && training.Scalar() == "surrogate")
      throw common::DataError(ran.string() + ": these runs trained on the surrogate (runtime.training: surrogate): --real takes an evaluation of real training");
  }
}

}  // namespace

std::vector<std::string> write_surrogate_variants(const FidelityRunOptions& options) {
  if (options.configs.empty()) throw common::UsageError("at least one CONFIG is needed");
  env::read_surrogate(options.surrogate);  // a bad file stops here, before any run
  std::error_code ec;
  if (fs::exists(options.out_dir, ec) && !fs::is_directory(options.out_dir, ec))
    throw common::UsageError("--out " + options.out_dir + ": is a file, not a folder: choose another folder");
  for (const auto& dir : options.real_from) check_trained_for_real(dir);
  // The surrogate's configs first: each must load (the surrogate fitted on its workload) before
  // a real evaluation spends its time. The user's file is read first, so that an error in it names
  // its own file and line, not the copy's; nothing is written until every one loads.
  const fs::path variants = fs::path(options.out_dir) / "surrogate-configs";
  std::vector<std::pair<fs::path, std::string>> texts;
  for (const auto& config : options.configs) {
    (void)load_config(config);
    const fs::path path = variants / fs::path(config).filename();
    const std::string text = surrogate_variant(config, options.surrogate);
    check_real_workload(options.real_from, config, parse_config(text, path.string()), options.workload);
    texts.emplace_back(path, text);
  }
  fs::create_directories(variants);
  std::vector<std::string> variant_paths;
  for (const auto& [path, text] : texts) {
    common::write_file_atomic(path.string(), text);
    variant_paths.push_back(path.string());
  }
  return variant_paths;
}

namespace {

EvaluateOptions sweep_options(const FidelityRunOptions& options) {
  EvaluateOptions evaluate;
  evaluate.policies = {options.policy};
  evaluate.seeds = options.seeds;
  evaluate.jobs = options.jobs;
  evaluate.quiet = options.quiet;
  evaluate.overwrite = options.overwrite;
  evaluate.workload = options.workload;
  return evaluate;
}

}  // namespace

std::string evaluate_on_surrogate(const FidelityRunOptions& options, const std::vector<std::string>& variant_paths) {
  EvaluateOptions evaluate = sweep_options(options);
  evaluate.configs = variant_paths;
  evaluate.out_dir = (fs::path(options.out_dir) / "surrogate").string();
  run_evaluation(evaluate);
  return evaluate.out_dir;
}

std::vector<ControllerRun> read_evaluations(const std::vector<std::string>& dirs) {
  std::vector<ControllerRun> runs;
  for (const auto& dir : dirs) {
    const auto read = read_evaluation_runs(dir);
    runs.insert(runs.end(), read.begin(), read.end());
  }
  return runs;
}

FidelityRunResult run_surrogate_fidelity(const FidelityRunOptions& options) {
  if (options.configs.empty()) throw common::UsageError("fidelity needs at least one CONFIG");
  FidelityRunResult result;
  const fs::path out(options.out_dir);
  // The surrogate's side first: it takes seconds, the real one hours, and a refusal of its folder
  // (another evaluation there) came after the real runs had spent them.
  result.surrogate_dir = evaluate_on_surrogate(options, write_surrogate_variants(options));
  result.real_dirs = options.real_from;
  if (options.real_from.empty()) {
    EvaluateOptions evaluate = sweep_options(options);
    evaluate.configs = options.configs;
    evaluate.out_dir = (out / "real").string();
    run_evaluation(evaluate);
    result.real_dirs = {evaluate.out_dir};
  }
  const std::vector<ControllerRun> real = read_evaluations(result.real_dirs);
  std::string real_names;
  for (const auto& dir : result.real_dirs) real_names += (real_names.empty() ? "" : ", ") + dir;
  result.fidelity = compare_surrogate(real, read_evaluation_runs(result.surrogate_dir));
  for (const std::uint64_t seed : options.seeds)
    if (std::find(result.fidelity.seeds.begin(), result.fidelity.seeds.end(), seed) == result.fidelity.seeds.end())
      result.seeds_not_compared.push_back(seed);
  const std::string md = (out / "fidelity.md").string(), csv = (out / "fidelity.csv").string();
  common::write_file_atomic(md, "# The surrogate of training against real training\n\nSurrogate: " + options.surrogate + "; real runs: " +
                                    real_names + "; surrogate runs: " + result.surrogate_dir + ".\n\n" +
                                    surrogate_fidelity_markdown(result.fidelity));
  common::write_file_atomic(csv, surrogate_fidelity_csv(result.fidelity));
  result.files = {md, csv};
  return result;
}

}  // namespace experiments
