// Bad configs: each error names file:line and the key, and says what was expected.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "common/errors.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "common/json_diff.hpp"
#include "common/limits.hpp"
#include "experiments/config/config.hpp"
#include "experiments/config/config_copy.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/results/results_folder.hpp"
#include "test_helpers.hpp"

using experiments::parse_config;

namespace {

const char* kValid = R"(name: tiny
seed: 3
data:
  dataset: synthetic
training:
  global_batch: 8
  epochs: 1
cluster:
  workers:
    - {name: a, time_model: {coefficients: [1, 0.5]}, max_batch: 64}
    - {name: b, time_model: {points: [[2, 3], [4, 4], [8, 6]]}, max_batch: 64}
policies:
  - dsgd
  - {name: local-sgd, H: 4}
)";

std::string with(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

void check_error(const std::string& yaml, const std::string& expected) {
  CHECK_THROWS_WITH_AS(parse_config(yaml, "x.yaml"), doctest::Contains(expected.c_str()), common::ConfigError);
}

}  // namespace

TEST_CASE("a valid config parses, with defaults resolved") {
  const auto cfg = parse_config(kValid, "x.yaml");
  CHECK(cfg.name == "tiny");
  CHECK(cfg.cluster.num_workers() == 2);
  CHECK(cfg.policies.size() == 2);
  CHECK(cfg.resolved["training"]["lr"] == 0.05);
  // Three profiled batch sizes fit at most a quadratic (BatchTimeModel::fit lowers the degree).
  CHECK(cfg.resolved["cluster"]["workers"][1]["time_model"]["fitted_coefficients"].size() == 3);
}

TEST_CASE("runtime.tf32: off unless asked, recorded in the resolved config either way, anything but a boolean is one line") {
  const auto off = parse_config(kValid, "x.yaml");
  CHECK_FALSE(off.training.tf32);
  CHECK(off.resolved["runtime"]["tf32"] == false);
  const auto on = parse_config(std::string(kValid) + "runtime: {device: cpu, tf32: true}\n", "x.yaml");
  CHECK(on.training.tf32);
  CHECK(on.resolved["runtime"]["tf32"] == true);
  check_error(std::string(kValid) + "runtime: {tf32: fast}\n", "x.yaml:15: runtime.tf32: expected true or false, got 'fast'");
}

TEST_CASE("training.shards: epoch unless asked, recorded in the resolved config, an unknown rule names its line") {
  const auto fixed = parse_config(kValid, "x.yaml");
  CHECK(fixed.training.shards == env::ShardRule::Epoch);
  CHECK(fixed.resolved["training"]["shards"] == "epoch");
  const auto rebalanced = parse_config(with("  epochs: 1\n", "  epochs: 1\n  shards: rebalance\n"), "x.yaml");
  CHECK(rebalanced.training.shards == env::ShardRule::Rebalance);
  CHECK(rebalanced.resolved["training"]["shards"] == "rebalance");
  CHECK(parse_config(with("  epochs: 1\n", "  epochs: 1\n  shards: steal\n"), "x.yaml").training.shards == env::ShardRule::Steal);
  check_error(with("  epochs: 1\n", "  epochs: 1\n  shards: sideways\n"), "x.yaml:8: training.shards: expected one of epoch, rebalance, steal");
}

TEST_CASE("unknown keys are named with their line") {
  check_error(with("epochs: 1", "epochs: 1\n  epoch: 3"), "x.yaml:8: training.epoch: unknown key");
  check_error(with("seed: 3", "seed: 3\ncluser: {}"), "x.yaml:3: cluser: unknown key");
  check_error(with("seed: 3", "seed: 3\n[a, b]: 3"), "x.yaml:3: [a, b]: unknown key");  // a key that is a list: shown as written
}

TEST_CASE("a key given twice is an error naming both lines, at any depth") {
  check_error(with("seed: 3", "seed: 3\nseed: 4"), "x.yaml:3: seed: duplicate key (first given on line 2)");
  check_error(with("epochs: 1", "epochs: 1\n  epochs: 2"), "x.yaml:8: training.epochs: duplicate key (first given on line 7)");
}

TEST_CASE("seeds: a list of distinct seeds") {
  CHECK(parse_config(with("seed: 3", "seeds: [4, 5]"), "x.yaml").seeds == std::vector<std::uint64_t>{4, 5});
  check_error(with("seed: 3", "seeds: [4, 4]"), "x.yaml:2: seeds: a seed is listed twice");
  check_error(with("seed: 3", "seeds: []"), "x.yaml:2: seeds: list at least one seed (or remove the key)");
  check_error(with("seed: 3", "seeds: [x]"), "x.yaml:2: seeds[0]: expected a non-negative integer, got 'x'");
}

TEST_CASE("wrong types, negative and zero sizes are rejected with what was expected") {
  check_error(with("global_batch: 8", "global_batch: -3"), "x.yaml:6: training.global_batch: expected a positive integer, got -3");
  check_error(with("global_batch: 8", "global_batch: 0"), "x.yaml:6: training.global_batch: expected a positive integer, got 0");
  check_error(with("epochs: 1", "epochs: lots"), "x.yaml:7: training.epochs: expected a positive integer, got 'lots'");
  // A key written without a value is an error, not its default (`epochs:` ran 5 epochs).
  check_error(with("epochs: 1", "epochs:"), "x.yaml:7: training.epochs: expected a positive integer, got nothing");
  // A synthetic data set larger than the machine was libtorch's allocation error without a key.
  check_error(with("dataset: synthetic", "dataset: synthetic\n  synthetic: {train: 1000000000000, side: 8}"),
              "x.yaml:5: data.synthetic: 1.0 T training and 512 test samples of 1x8x8 need about 264.0 TB, more than this machine's");
  // LeNet on images under 12x12 was a bare runtime error without file, line or key.
  check_error(with("dataset: synthetic", "dataset: synthetic\n  synthetic: {side: 8}\nmodel: {arch: cnn}"),
              "x.yaml:6: model.arch: cnn needs inputs of at least 12x12 pixels, and this data set's are 8x8");
  check_error(with("epochs: 1", "epochs: 1\n  lr: ~"), "x.yaml:8: training.lr: expected a number > 0");
  check_error(with("seed: 3", "seed: 3\nruntime: {tf32: }"), "runtime.tf32: expected true or false, got nothing");
  check_error(with("max_batch: 64}\n    - {name: b", "max_batch: 2.5}\n    - {name: b"), "x.yaml:10: cluster.workers[0].max_batch: expected a positive integer, got '2.5'");
  check_error(with("seed: 3", "seed: 3\nnetwork: {bandwidth_gbps: 0}"), "network.bandwidth_gbps: expected a number >= 1e-06 and <= 1e+06, got 0");
  check_error(with("coefficients: [1, 0.5]", "coefficients: [10, -0.5]"), "cluster.workers[0].time_model.coefficients: the batch time decreases");
  // Fewer samples than workers: dsgd gave one of them batch 0 for the whole run.
  check_error(with("global_batch: 8", "global_batch: 1"),
              "x.yaml:6: training.global_batch: 1 for 2 workers: each needs at least one sample of a round, so at least 2");
  // A server's name is a name, as a worker's (a flat list's `server:` was taken as any text).
  check_error(with("{name: a, time", "{name: a, server: \"x,/..\", time"), "x.yaml:10: cluster.workers[0].server: ");
}

TEST_CASE("unknown policies and duplicate labels are rejected") {
  const auto cfg = parse_config(with("- dsgd", "- dsgx"), "x.yaml");
  CHECK_THROWS_WITH_AS(experiments::make_policy(cfg.policies[0], cfg), doctest::Contains("x.yaml:13: policies[0].name: unknown policy 'dsgx'"), common::ConfigError);
  check_error(with("- dsgd", "- local-sgd"), "two policies named 'local-sgd'");
  const auto negative = parse_config(with("H: 4", "H: -1"), "x.yaml");
  CHECK_THROWS_WITH_AS(experiments::make_policy(negative.policies[1], negative),
                       "x.yaml:14: policies[1].H: expected a positive integer, got -1", common::ConfigError);
}

TEST_CASE("empty and non-YAML configs name the file") {
  CHECK_THROWS_WITH_AS(parse_config("", "empty.yaml"), "empty.yaml: the config is empty", common::ConfigError);
  CHECK_THROWS_WITH_AS(parse_config("# only a comment\n", "c.yaml"), "c.yaml: the config is empty", common::ConfigError);
  CHECK_THROWS_WITH_AS(parse_config("a: [1, 2\nb: }", "bad.yaml"), doctest::Contains("bad.yaml:"), common::ConfigError);
  CHECK_THROWS_WITH_AS(parse_config("just a sentence", "s.yaml"), doctest::Contains("s.yaml:1: expected a YAML mapping"), common::ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(std::string(kValid) + "---\nname: second\n", "two.yaml"), "two.yaml:16: a second YAML document: one config per file",
                       common::ConfigError);
  CHECK_THROWS_WITH_AS(experiments::load_config("/no/such/file.yaml"), "/no/such/file.yaml: no such config file", common::ConfigError);
}

TEST_CASE("an experiment without a cluster says what is missing, and a training config given instead says which command reads it") {
  const std::string no_cluster = with("cluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1, 0.5]}, max_batch: 64}\n"
                                      "    - {name: b, time_model: {points: [[2, 3], [4, 4], [8, 6]]}, max_batch: 64}\n",
                                      "");
  check_error(no_cluster, "cluster: required key is missing (the workers and their batch-time models)");
  for (const char* key : {"a3c: {agents: 2}\n", "clusters: {servers: [1, 2]}\n", "experiments: [task.yaml]\n"}) {
    INFO(key);
    check_error(no_cluster + key, "cluster: required key is missing: this is a training config");
    check_error(no_cluster + key, "read by `orchestra train` (and its clusters: by `orchestra draw`)");
  }
}

TEST_CASE("references to things that do not exist are rejected") {
  check_error(with("policies:", "  perturbations: [{worker: zz, add_ms: 5}]\npolicies:"), "cluster.perturbations[0].worker: no worker named 'zz'");
  check_error(with("dataset: synthetic", "dataset: mnist"), "data.path: dataset 'mnist' needs a path");
  check_error(with("dataset: synthetic", "dataset: imagenet"), "data.dataset: expected one of fashion-mnist, mnist, cifar10, synthetic, got 'imagenet'");
}

TEST_CASE("the resolved config keeps every section a calibration reads back (data, model, network, perturbations)") {
  const auto c = parse_config(with("policies:", "  perturbations:\n    - {worker: b, slowdown: 2}\npolicies:"), "x.yaml");
  CHECK(c.resolved["data"]["dataset"] == "synthetic");
  CHECK(c.resolved["model"]["arch"] == "mlp");
  CHECK(c.resolved["network"].contains("bandwidth_gbps"));
  REQUIRE(c.resolved["cluster"]["perturbations"].size() == 1);
  CHECK(c.resolved["cluster"]["perturbations"][0]["slowdown"] == 2.0);
}

TEST_CASE("a perturbation without end_s lasts to the end, and its config.json reads back as the same") {
  const auto at = std::string(kValid).find("policies:");
  std::string open = std::string(kValid).substr(0, at) + "  perturbations:\n    - {worker: b, start_s: 2, slowdown: 3}\n" +
                     std::string(kValid).substr(at);
  open.replace(open.find("{points: [[2, 3], [4, 4], [8, 6]]}"), 34, "{coefficients: [2, 0.5]}");  // a model that reads back alone
  const auto config = parse_config(open, "x.yaml");
  REQUIRE(config.cluster.perturbations.size() == 1);
  CHECK(config.cluster.perturbations[0].end_s == std::numeric_limits<double>::max());
  // config.json holds the resolved config, the open end as the largest double; read back (as
  // `orchestra calibrate` reads a launched run's), it is the same perturbation.
  nlohmann::json written = config.resolved;
  for (const char* key : {"file", "seeds"}) written.erase(key);  // as calibrate reads it back (calibration/real_run.cpp)
  written["policies"] = nlohmann::json::array({"dsgd"});
  const auto again = parse_config(written.dump(2), "config.json");
  REQUIRE(again.cluster.perturbations.size() == 1);
  CHECK(again.cluster.perturbations[0].end_s == std::numeric_limits<double>::max());
  CHECK(again.cluster.perturbations[0].start_s == 2);
  // Any other end past the clock's limit is still refused.
  check_error(open.replace(open.find("start_s: 2,"), 11, "start_s: 2, end_s: 2e9,"), "cluster.perturbations[0].end_s: expected a number >= 0 and <= 1e+09");
}

TEST_CASE("trace replay keys: time_model {trace}, perturbations {trace}, and their errors name the config line and the file's") {
  testing::TempDir dir;
  testing::write_text(dir / "a.csv", "clock_ms,batch,ms\n0,4,3\n5,4,3.5\n9,4,2.5\n");
  testing::write_text(dir / "slow.csv", "time_s,worker,slowdown\n0,b,2\n1,b,1\n");
  const std::string traced = with("{name: a, time_model: {coefficients: [1, 0.5]}, max_batch: 64}", "{name: a, time_model: {trace: a.csv}, max_batch: 64}");
  const auto at = traced.find("policies:");
  const std::string config = traced.substr(0, at) + "  perturbations: {trace: slow.csv}\n" + traced.substr(at);
  // Paths are relative to the config's folder.
  const auto c = parse_config(config, dir / "x.yaml");
  REQUIRE(c.cluster.workers[0].trace);
  CHECK(c.cluster.workers[0].trace->rows().size() == 3);
  REQUIRE(c.cluster.perturbations.size() == 1);
  CHECK(c.cluster.perturbations[0].end_s == 1.0);

  testing::write_text(dir / "a.csv", "clock_ms,batch,ms\n0,4,3\n");
  CHECK_THROWS_WITH_AS(parse_config(config, dir / "x.yaml"), doctest::Contains("x.yaml:10: cluster.workers[0].time_model.trace: "), common::ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(config, dir / "x.yaml"), doctest::Contains("a trace needs at least 2"), common::ConfigError);
  testing::write_text(dir / "a.csv", "clock_ms,batch,ms\n0,4,3\n5,4,3.5\n");
  testing::write_text(dir / "slow.csv", "time_s,worker,slowdown\n0,nobody,2\n1,b,1\n");
  CHECK_THROWS_WITH_AS(parse_config(config, dir / "x.yaml"), doctest::Contains("cluster.perturbations.trace: "), common::ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(config, dir / "x.yaml"), doctest::Contains("slow.csv:2: worker: no worker named 'nobody'"), common::ConfigError);
  check_error(with("{name: a, time_model: {coefficients: [1, 0.5]}, max_batch: 64}", "{name: a, time_model: {trace: a.csv, coefficients: [1]}, max_batch: 64}"),
              "give exactly one of coefficients, points or trace");
}

TEST_CASE("round_overhead: simulated runs only, costs >= 0") {
  const auto c = parse_config(with("policies:", "  round_overhead: {fixed_ms: 2.5, per_step_ms: 0.5}\npolicies:"), "x.yaml");
  CHECK(c.cluster.overhead.fixed_ms == 2.5);
  CHECK(c.cluster.overhead.per_step_ms == 0.5);
  check_error(with("policies:", "  round_overhead: {fixed_ms: -1}\npolicies:"), "cluster.round_overhead.fixed_ms");
  check_error(with("cluster:\n", "cluster:\n  mode: real\n  round_overhead: {fixed_ms: 1}\n"), "a real run pays its own round overheads");
}

namespace {

// A surrogate of kValid's workload (synthetic 2048 / 512, the default MLP, B = 8), written to `path`.
void write_matching_surrogate(const std::string& path, const std::string& model = "mlp [256, 128]") {
  env::SurrogateModel m;
  m.task = {"synthetic", 2048, 512, model, 1000, 8, 0.05, 0.9, 0.0005, "constant"};
  m.accuracy.coefficients = {0.9, -0.3};
  env::write_surrogate(path, m);
}

}  // namespace

TEST_CASE("runtime.training: surrogate reads the surrogate file relative to the config, checked against the workload") {
  testing::TempDir dir;
  write_matching_surrogate(dir / "s.json");
  const std::string yaml = with("policies:", "runtime:\n  training: surrogate\n  surrogate: s.json\npolicies:");
  const auto cfg = parse_config(yaml, dir / "x.yaml");
  CHECK(cfg.training_backend == experiments::TrainingBackend::Surrogate);
  REQUIRE(cfg.surrogate);
  CHECK(cfg.surrogate->task.model == "mlp [256, 128]");
  CHECK(cfg.resolved["runtime"]["training"] == "surrogate");
  CHECK(cfg.resolved["runtime"]["surrogate_digest"] == env::surrogate_digest(*cfg.surrogate));
  CHECK(parse_config(kValid, "x.yaml").training_backend == experiments::TrainingBackend::Libtorch);
  CHECK_FALSE(parse_config(kValid, "x.yaml").resolved["runtime"].contains("surrogate_digest"));
  // The experiment is the surrogate's content: the same file elsewhere is the same experiment, a
  // refit at the same path another one (`run` into a folder of the first refuses it).
  const nlohmann::json identity = experiments::experiment_identity(cfg.resolved);
  std::filesystem::create_directories(dir / "moved");
  std::filesystem::copy_file(dir / "s.json", dir / "moved/s.json");
  CHECK(experiments::experiment_identity(parse_config(with("policies:", "runtime:\n  training: surrogate\n  surrogate: moved/s.json\npolicies:"),
                                                      dir / "x.yaml")
                                             .resolved) == identity);
  write_matching_surrogate(dir / "s.json");
  env::SurrogateModel refit = *env::read_surrogate(dir / "s.json");
  refit.curve.scale *= 2;
  env::write_surrogate(dir / "s.json", refit);
  CHECK(common::differing_keys(identity, experiments::experiment_identity(parse_config(yaml, dir / "x.yaml").resolved)) ==
        std::vector<std::string>{"runtime.surrogate_digest"});
}

TEST_CASE("a model whose replicas cannot fit this machine's memory is refused when the config is read, naming the model") {
  // 10 layers of 65,536: 38.7 G parameters, about 1.2 TB for two workers' replicas.
  const std::string huge = "model:\n  hidden: [65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536]\ntraining:";
  CHECK_THROWS_WITH_AS(parse_config(with("training:", huge), "x.yaml"),
                       doctest::Contains("x.yaml:6: model.hidden: mlp [65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536] "
                                         "(38.7 G parameters) on 2 workers needs about 1.2 TB for its replicas, more than this machine's"),
                       common::ConfigError);
  // Nothing is allocated where nothing trains, or trains elsewhere: a timing-only run, or a GPU's own memory.
  CHECK_NOTHROW(parse_config(with("training:", huge).replace(with("training:", huge).find("epochs: 1"), 9, "epochs: 1\n  timing_only: true"), "x.yaml"));
  CHECK_NOTHROW(parse_config(with("training:", huge) + "runtime:\n  device: cuda\n", "x.yaml"));
}

TEST_CASE("runtime.training: surrogate errors name the file, line and key") {
  testing::TempDir dir;
  const std::string config = dir / "x.yaml";
  const auto error = [&](const std::string& runtime, const std::string& expected) {
    CHECK_THROWS_WITH_AS(parse_config(with("policies:", "runtime:\n" + runtime + "policies:"), config),
                         doctest::Contains((config + ":" + expected).c_str()), common::ConfigError);
  };
  error("  training: surrogate\n", "13: runtime.training: surrogate needs surrogate: FILE");
  error("  training: simulated\n", "13: runtime.training: expected one of libtorch, surrogate");
  error("  training: surrogate\n  surrogate: none.json\n", "14: runtime.surrogate: " + (dir / "none.json") + ": no such surrogate file");
  testing::write_text(dir / "garbage.json", "{");
  error("  training: surrogate\n  surrogate: garbage.json\n", "14: runtime.surrogate: " + (dir / "garbage.json") + ": not a surrogate file");
  write_matching_surrogate(dir / "other.json", "mlp [64]");
  error("  training: surrogate\n  surrogate: other.json\n",
        "14: runtime.surrogate: " + (dir / "other.json") + ": the surrogate was fitted on model mlp [64], this run trains mlp [256, 128]");
  write_matching_surrogate(dir / "s.json");
  error("  surrogate: s.json\n", "13: runtime.surrogate: is only read with training: surrogate");
  CHECK_THROWS_WITH_AS(parse_config(with("epochs: 1", "epochs: 1\n  timing_only: true") + "runtime:\n  training: surrogate\n  surrogate: s.json\n",
                                    config),
                       doctest::Contains("runtime.training: surrogate trains nothing with training.timing_only"), common::ConfigError);
}

// Issue 39, "nothing lost": a label names a results folder, so each of these would have written
// outside it, removed it, or mixed two policies' files. Every one is one line naming file:line
// and the key, before anything runs.
TEST_CASE("a policy's label is a name, never a path: each hostile label is refused at its line") {
  struct Case {
    const char* label;    // as written in YAML
    const char* problem;  // what the message says
  };
  const Case cases[] = {
      {"\".\"", "is '.', which names the folder it is in"},
      {"\"..\"", "is '..', which names the folder above"},
      {"\"\"", "is empty"},
      {"\"../x\"", "holds '/', a path separator"},
      {"\"../../escaped\"", "holds '/', a path separator"},
      {"\"a/b\"", "holds '/', a path separator"},
      {"\"a\\\\b\"", "holds '\\', a path separator"},
      {"\"tab\\there\"", "holds a control character (byte 0x09)"},
      {"\"new\\nline\"", "holds a control character (byte 0x0a)"},
      {"\"bell\\a\"", "holds a control character (byte 0x07)"},
      {"\".hidden\"", "starts with '.'"},
      {"\"a,b\"", "holds ','"},
      {"checkpoints", "is a name a run writes beside its policies' folders (checkpoints)"},
      {"plots", "is a name a run writes beside its policies' folders (plots)"},
      {"comparison.md", "is a name a run writes beside its policies' folders (comparison.md)"},
      {"comparison.csv", "is a name a run writes beside its policies' folders (comparison.csv)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.label);
    const std::string yaml = with("{name: local-sgd, H: 4}", std::string("{name: local-sgd, H: 4, label: ") + c.label + "}");
    check_error(yaml, "x.yaml:14: policies[1].label: a policy's label names its results folder: ");
    check_error(yaml, c.problem);
  }
  // A duplicate (here: a label equal to another policy's name) is one folder for two policies.
  check_error(with("{name: local-sgd, H: 4}", "{name: local-sgd, H: 4, label: dsgd}"), "x.yaml:14: policies[1].label: two policies named 'dsgd'");
  // An unlabelled policy is labelled with its name, which is checked the same way.
  check_error(with("  - dsgd\n", "  - \"../up\"\n"), "x.yaml:13: policies[0]: a policy's label names its results folder: '../up' holds '/'");
  // A label of 200 bytes is fine, 201 is not (suffixes are added to it).
  CHECK_NOTHROW(parse_config(with("H: 4}", "H: 4, label: " + std::string(200, 'x') + "}"), "x.yaml"));
  check_error(with("H: 4}", "H: 4, label: " + std::string(201, 'x') + "}"), "is 201 bytes long (at most 200)");
}

TEST_CASE("an experiment's name is results/<name>/: a name, given or taken from the file's stem") {
  for (const char* name : {"\"../../escaped\"", "\".\"", "\"..\"", "\"\"", "\"a/b\"", "\"x\\ty\""}) {
    CAPTURE(name);
    check_error(with("name: tiny", std::string("name: ") + name), "x.yaml:1: name: expected a name (it names a folder or a column)");
  }
  std::string unnamed = kValid;
  unnamed.erase(0, unnamed.find('\n') + 1);
  CHECK(parse_config(unnamed, "configs/good.yaml").name == "good");
  CHECK_THROWS_WITH_AS(parse_config(unnamed, "configs/..yaml"), doctest::Contains("configs/..yaml:1: name: the results folder is named after the config file's stem, '.'"),
                       common::ConfigError);
}

TEST_CASE("worker and server names are names too (CSV columns, trace and perturbation keys)") {
  check_error(with("{name: a,", "{name: \"x,y\","), "x.yaml:10: cluster.workers[0].name: expected a name");
  check_error(with("{name: a,", "{name: \"\","), "x.yaml:10: cluster.workers[0].name: expected a name");
  const std::string servers = with("  workers:\n    - {name: a, time_model: {coefficients: [1, 0.5]}, max_batch: 64}\n    - {name: b, time_model: {points: [[2, 3], [4, 4], [8, 6]]}, max_batch: 64}\n",
                                   "  servers:\n    - name: \"../s\"\n      workers:\n        - {name: a, time_model: {coefficients: [1, 0.5]}, max_batch: 64}\n");
  check_error(servers, "x.yaml:10: cluster.servers[0].name: expected a name");
}

// Issue 39: every time, coefficient and slowdown is finite and in a stated range, so no clock can
// overflow (coefficients of 1e308 made every policy end with 0 epochs, and exit 0).
TEST_CASE("time models, perturbations, network and budgets: finite and in their stated ranges") {
  check_error(with("coefficients: [1, 0.5]", "coefficients: [1e308, 1e308]"), "x.yaml:10: cluster.workers[0].time_model.coefficients[0]: expected a number >= -1e+07 and <= 1e+07, got '1e308'");
  check_error(with("coefficients: [1, 0.5]", "coefficients: [1e300, 0.2]"), "cluster.workers[0].time_model.coefficients[0]: expected a number >= -1e+07");
  check_error(with("coefficients: [1, 0.5]", "coefficients: [.inf]"), "cluster.workers[0].time_model.coefficients[0]: expected a number");
  check_error(with("coefficients: [1, 0.5]", "coefficients: [.nan, 1]"), "cluster.workers[0].time_model.coefficients[0]: expected a number");
  // Each coefficient in range, but a step of max_batch past 2.8 hours.
  check_error(with("coefficients: [1, 0.5]", "coefficients: [1, 0, 0, 1e4]"),
              "x.yaml:10: cluster.workers[0].time_model.coefficients: a step of max_batch (64) would take 2.62144e+09 ms; a step takes at most 1e+07 ms");
  check_error(with("points: [[2, 3], [4, 4], [8, 6]]", "points: [[2, 3], [4, 4], [8, 1e308]]"), "cluster.workers[1].time_model.points[2]: expected batch >= 1");
  // A fit that reaches 0 below its smallest point: a line through -98 ms at a batch of 1 gave
  // negative compute times and utilizations, and the run then refused its own summary.
  check_error(with("points: [[2, 3], [4, 4], [8, 6]]", "points: [[50, 1], [60, 11]]"),
              "x.yaml:11: cluster.workers[1].time_model.points: the model fitted to these points gives -48 ms for a batch of 1; a step must take some time");
  check_error(with("points: [[2, 3], [4, 4], [8, 6]]", "points: [[1, 1], [2, 4e6]]"),
              "x.yaml:11: cluster.workers[1].time_model.points: a step of max_batch (64) would take 2.52e+08 ms");
  check_error(with("policies:", "  perturbations: [{worker: a, slowdown: 1e308}]\npolicies:"),
              "cluster.perturbations[0].slowdown: expected a number > 0 and <= 1e+06, got 1e308");
  check_error(with("policies:", "  perturbations: [{worker: a, add_ms: 1e300}]\npolicies:"), "cluster.perturbations[0].add_ms: expected a number >= 0 and <= 1e+07");
  check_error(with("policies:", "  perturbations: [{worker: a, add_ms: 1, start_s: 1e300}]\npolicies:"), "cluster.perturbations[0].start_s: expected a number >= 0 and <= 1e+09");
  check_error(with("policies:", "network: {bandwidth_gbps: 1e-300}\npolicies:"), "network.bandwidth_gbps: expected a number >= 1e-06 and <= 1e+06");
  check_error(with("policies:", "network: {message_mb: 1e300}\npolicies:"), "network.message_mb: expected a number >= 0 and <= 1e+09");
  check_error(with("epochs: 1", "epochs: 1\n  max_sim_seconds: 1e300"), "training.max_sim_seconds: expected a number >= 0 and <= 1e+09");
  // An epoch's sample order is held in memory: 1e11 samples ended in std::bad_alloc.
  check_error(with("epochs: 1", "epochs: 1\n  timing_only: true\n  train_samples: 100000000000"),
              "x.yaml:9: training.train_samples: expected an integer <= 1073741824, got 100000000000");
  // What the ranges let through stays finite: the largest step of the largest batch, slowed down
  // the most, over a million rounds.
  CHECK(std::isfinite(common::kStepMs.max * common::kSlowdown.max * 1e6 + common::kClockS.max * 1000));
}

TEST_CASE("data.path is read from the config's folder wherever the command runs, and a folder that is not there is the key's line") {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "configs/fm");
  const std::string relative = with("dataset: synthetic", "dataset: mnist\n  path: fm");
  const auto cfg = parse_config(relative, dir / "configs/x.yaml");
  CHECK(cfg.data.path == dir / "configs/fm");  // not ./fm of the test's working folder
  CHECK(cfg.resolved["data"]["path"] == dir / "configs/fm");  // config.json says which folder it was
  CHECK(parse_config(with("dataset: synthetic", "dataset: mnist\n  path: ../configs/./fm"), dir / "configs/x.yaml").data.path ==
        dir / "configs/fm");
  const std::string missing = "x.yaml:5: data.path: " + (dir / "fm") + " is not a folder (a relative path is read from the config's folder)";
  CHECK_THROWS_WITH_AS(parse_config(relative, dir / "x.yaml"), doctest::Contains(missing.c_str()), common::ConfigError);
  // A run that trains nothing reads no data: its folder is not asked for.
  std::string timing_only = relative;
  timing_only.insert(timing_only.find("  epochs: 1"), "  timing_only: true\n");
  CHECK_NOTHROW(parse_config(timing_only, dir / "x.yaml"));
  // An empty path is the default, not the config's folder: what config.json records for synthetic
  // data, copied by `orchestra calibrate` into a config elsewhere (compare --sim then saw two tasks).
  const auto synthetic = parse_config(with("dataset: synthetic", "dataset: synthetic\n  path: \"\""), dir / "configs/x.yaml");
  CHECK(synthetic.data.path.empty());
  CHECK(synthetic.resolved["data"]["path"] == "");
  CHECK_THROWS_WITH_AS(parse_config(with("dataset: synthetic", "dataset: mnist\n  path: \"\""), dir / "x.yaml"),
                       doctest::Contains("data.path: dataset 'mnist' needs a path"), common::ConfigError);
}

TEST_CASE("a config's copy written elsewhere reads the same files: relative data.path and runtime.surrogate made absolute") {
  YAML::Node root = YAML::Load("data: {dataset: mnist, path: fm}\nruntime: {surrogate: ../s.json, threads: 1}\nmodel: {arch: mlp}\n");
  experiments::anchor_relative_paths(root, "/work/configs/x.yaml");
  CHECK(root["data"]["path"].Scalar() == "/work/configs/fm");
  CHECK(root["runtime"]["surrogate"].Scalar() == "/work/s.json");
  CHECK(root["runtime"]["threads"].Scalar() == "1");
  YAML::Node absolute = YAML::Load("data: {path: /data/fm}\nruntime: [1, 2]\n");  // a wrong section is the reader's to name
  experiments::anchor_relative_paths(absolute, "/work/configs/x.yaml");
  CHECK(absolute["data"]["path"].Scalar() == "/data/fm");
  CHECK(absolute["runtime"].IsSequence());
  // A policy's file, found as the reader finds it: as given (the working folder), else beside the config.
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "configs");
  testing::write_text(dir / "configs/mine.pt", "");
  YAML::Node policies = YAML::Load("policies: [dsgd, {name: orchestra-a3c, policy: mine.pt}, {name: planned-t, surrogate: nowhere.json},"
                                   " {name: orchestra-a3c, policy: " + std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/orchestra-a3c.pt}]");
  experiments::anchor_relative_paths(policies, dir / "configs/x.yaml");
  CHECK(policies["policies"][1]["policy"].Scalar() == dir / "configs/mine.pt");
  CHECK(policies["policies"][2]["surrogate"].Scalar() == "nowhere.json");  // found nowhere: the reader names it
  CHECK(policies["policies"][0].Scalar() == "dsgd");
  YAML::Node empty = YAML::Load("data: {dataset: synthetic, path: \"\"}\n");  // the default: no folder to anchor
  experiments::anchor_relative_paths(empty, "/work/configs/x.yaml");
  CHECK(empty["data"]["path"].Scalar().empty());
}
