#include "experiments/surrogate/fidelity_run.hpp"

#include <filesystem>
#include <yaml-cpp/yaml.h>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/evaluation.hpp"

namespace experiments {

namespace fs = std::filesystem;

std::string surrogate_variant(const std::string& config_path, const std::string& surrogate) {
  YAML::Node root = YAML::LoadFile(config_path);
  if (root["data"] && root["data"]["path"] && root["data"]["path"].IsScalar()) {
    const fs::path data = root["data"]["path"].Scalar();
    if (data.is_relative()) root["data"]["path"] = fs::absolute(fs::path(config_path).parent_path() / data).lexically_normal().string();
  }
  root["runtime"]["training"] = "surrogate";
  root["runtime"]["surrogate"] = fs::absolute(surrogate).lexically_normal().string();
  YAML::Emitter out;
  out << root;
  return "# " + config_path + " on the surrogate of training (orchestra surrogate fidelity)\n" + std::string(out.c_str()) + "\n";
}

FidelityRunResult run_surrogate_fidelity(const FidelityRunOptions& options) {
  if (options.configs.empty()) throw common::UsageError("fidelity needs at least one CONFIG");
  env::read_surrogate(options.surrogate);  // a bad file stops here, before any run
  FidelityRunResult result;
  const fs::path out(options.out_dir);
  // The surrogate's configs first: each must load (the surrogate fitted on its workload) before
  // the real evaluation spends its time.
  const fs::path variants = out / "surrogate-configs";
  fs::create_directories(variants);
  std::vector<std::string> variant_paths;
  for (const auto& config : options.configs) {
    const fs::path path = variants / fs::path(config).filename();
    const std::string text = surrogate_variant(config, options.surrogate);
    parse_config(text, path.string());
    common::write_file_atomic(path.string(), text);
    variant_paths.push_back(path.string());
  }
  EvaluateOptions evaluate;
  evaluate.policies = {options.policy};
  evaluate.seeds = options.seeds;
  evaluate.jobs = options.jobs;
  evaluate.quiet = options.quiet;
  result.real_dirs = options.real_from;
  if (options.real_from.empty()) {
    evaluate.configs = options.configs;
    evaluate.out_dir = (out / "real").string();
    run_evaluation(evaluate);
    result.real_dirs = {evaluate.out_dir};
  }
  evaluate.configs = variant_paths;
  result.surrogate_dir = (out / "surrogate").string();
  evaluate.out_dir = result.surrogate_dir;
  run_evaluation(evaluate);
  std::vector<ControllerRun> real;
  std::string real_names;
  for (const auto& dir : result.real_dirs) {
    const auto runs = read_evaluation_runs(dir);
    real.insert(real.end(), runs.begin(), runs.end());
    real_names += (real_names.empty() ? "" : ", ") + dir;
  }
  result.fidelity = compare_surrogate(real, read_evaluation_runs(result.surrogate_dir));
  const std::string md = (out / "fidelity.md").string(), csv = (out / "fidelity.csv").string();
  common::write_file_atomic(md, "# The surrogate of training against real training\n\nSurrogate: " + options.surrogate + "; real runs: " +
                                    real_names + "; surrogate runs: " + result.surrogate_dir + ".\n\n" +
                                    surrogate_fidelity_markdown(result.fidelity));
  common::write_file_atomic(csv, surrogate_fidelity_csv(result.fidelity));
  result.files = {md, csv};
  return result;
}

}  // namespace experiments
