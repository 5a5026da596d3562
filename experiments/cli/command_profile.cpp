// `orchestra profile`: LBB's profiling phase (Alg. 1) on this machine. It times forward +
// backward of the model at batch sizes 2, 4, 8, ... up to the limit or until memory runs out,
// trims each size's outliers, fits Eq. 1 and prints the result in the form `orchestra balance`
// reads, so a cluster's machines can be profiled one by one and their entries put together.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/limits.hpp"
#include "common/names.hpp"
#include "env/train/dataset_registry.hpp"
#include "env/train/local_sgd_env.hpp"
#include "env/train/step_profiler.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/config/config.hpp"
#include "env/train/compute_threads.hpp"
#include "lbb/profiler.hpp"

namespace experiments {

namespace {

const char* kProfileHelp = R"(usage: orchestra profile [--config FILE] [--model M] [--dataset D] [--max-batch N]
                        [--repetitions N] [--trim F] [--threads N] [--global-batch N]
                        [--name NAME] [--seed N]

Measures this machine for LBB (Alg. 1): forward + backward of the model on synthetic inputs
shaped like the dataset's, at batch sizes 2, 4, 8, ... up to --max-batch (and the limit itself),
or until a batch cannot be allocated. Each size runs once untimed, then --repetitions times; the
mean after trimming --trim of the runs at each end is its time. A cubic (Eq. 1) is fitted to the
points. Prints JSON in the form `orchestra balance` reads: the worker's "samples" ([batch, ms]),
fitted "model" (a0..a3, ms) and "max_batch" (the largest batch that ran).

  --config FILE      take the model, dataset and global batch from an experiment config
  --model M          a model below (default: the config's, else mlp)
  --dataset D        a dataset below, for its input shape (default: the config's, else
                     fashion-mnist)
  --max-batch N      largest batch to try (default 512, LBB's global batch: no worker gets more)
  --repetitions N    timed runs per batch size (default 5)
  --trim F           share of runs dropped at each end, 0 to 0.5 (default 0.2)
  --threads N        intra-op threads for libtorch and OpenBLAS (default 1)
  --global-batch N   global_batch written to the output (default: the config's, else the
                     largest batch that ran, so that the file balances as it is)
  --name NAME        the worker's name in the output (default: this host's name); a name as a
                     config's worker takes (no '/', ',', '"', leading '.', ...)
  --seed N           seed of the model's weights and the synthetic inputs (default 1)

example:
  orchestra profile --model cnn --max-batch 256 --name host-a > host-a.json
  orchestra balance host-a.json   # or first gather every host's worker entry in one file
)";

// One of `names` (a table's), or a UsageError listing them.
std::string one_of(const std::string& flag, const std::string& value, const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (value == names[i]) return value;
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  throw UsageError(flag + ": expected " + list + ", got '" + value + "'");
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "this-host";
  return buf;
}

// Rounded to 0.1 us: finer digits differ from run to run anyway, and the points stay readable.
double microsecond_tenths(double ms) { return std::round(ms * 1e4) / 1e4; }

// The document `orchestra balance` reads, laid out by hand so that each [batch, ms] point is one
// line (nlohmann's pretty printer would spread every pair over four).
std::string profile_json(const std::string& name, int global_batch, const lbb::MemoryBoundProfile& result) {
  std::string samples;
  for (const auto& p : result.profile.points) {
    const nlohmann::json point = {static_cast<int>(p.batch), microsecond_tenths(p.ms)};
    samples += (samples.empty() ? "\n        " : ",\n        ") + point.dump();
  }
  std::string text = "{\n  \"global_batch\": " + std::to_string(global_batch) + ",\n  \"workers\": [\n    {\n";
  text += "      \"name\": " + nlohmann::json(name).dump() + ",\n";
  text += "      \"samples\": [" + samples + "\n      ],\n";
  text += "      \"model\": " + nlohmann::json(result.profile.model.coefficients()).dump() + ",\n";
  text += "      \"max_batch\": " + std::to_string(result.max_batch) + "\n    }\n  ]\n}\n";
  return text;
}

}  // namespace

int command_profile(const Args& args) {
  std::string config_path, model_flag, dataset_flag, name;
  int max_batch = 512, threads = 1, global_batch = 0;
  std::uint64_t seed = 1;
  lbb::ProfileOptions options;  // 5 repetitions, 20% trimmed at each end, cubic (Eq. 1)
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    const auto value = [&]() -> const std::string& { return arg.value(); };
    if (a == "-h" || a == "--help") {
      std::cout << kProfileHelp << "\nmodels (--model):\n" << env::model_help() << "\ndatasets (--dataset):\n" << env::dataset_help();
      return 0;
    } else if (a == "--config") {
      config_path = value();
    } else if (a == "--model") {
      model_flag = value();
    } else if (a == "--dataset") {
      dataset_flag = value();
    } else if (a == "--max-batch") {
      max_batch = static_cast<int>(arg.integer(1, common::kMaxBatch));
    } else if (a == "--repetitions") {
      options.repetitions = static_cast<int>(arg.integer(1, 1000));
    } else if (a == "--trim") {
      options.trim_fraction = arg.number(0, 0.5);
    } else if (a == "--threads") {
      threads = static_cast<int>(arg.integer(1, 256));
    } else if (a == "--global-batch") {
      global_batch = static_cast<int>(arg.integer(1, 1 << 30));
    } else if (a == "--name") {
      // The name a config's worker would carry (README, "Names are names"): checked before the
      // profiling, not by the config that is given this file later.
      name = value();
      if (const auto problem = common::name_problem(name))
        throw UsageError("--name: " + common::quoted_name(name) + " " + *problem);
    } else if (a == "--seed") {
      seed = static_cast<std::uint64_t>(arg.integer(0, (1LL << 62)));
    } else {
      throw UsageError("unexpected argument " + a);
    }
  }

  env::ModelSpec model;
  env::DataSpec data;
  if (!config_path.empty()) {
    const ExperimentConfig config = load_config(config_path);
    model = config.training.model;
    data = config.data;
    if (global_batch == 0) global_batch = config.global_batch;
  }
  if (!model_flag.empty()) model.arch = one_of("--model", model_flag, env::model_names());
  if (!dataset_flag.empty()) data.dataset = one_of("--dataset", dataset_flag, env::dataset_names());
  if (name.empty()) name = host_name();

  env::set_compute_threads(threads);
  const std::vector<std::int64_t> shape = env::input_shape_of(data);
  env::StepTimer timer(model, shape, 10, seed);
  const lbb::MemoryBoundProfile result =
      lbb::profile_until_out_of_memory([&timer](int batch) { return timer.step_ms(batch); }, max_batch, options);

  if (global_batch == 0) global_batch = result.max_batch;
  std::cout << profile_json(name, global_batch, result);
  std::cerr << "profiled " << model.arch << " on " << data.dataset << "-shaped input ["
            << shape[0] << ", " << shape[1] << ", " << shape[2] << "] with " << threads << " thread(s): "
            << result.profile.points.size() << " batch sizes, max_batch " << result.max_batch
            << (result.hit_memory_limit ? " (the next size did not fit in memory)" : " (the --max-batch limit)") << "\n";
  return 0;
}

}  // namespace experiments
