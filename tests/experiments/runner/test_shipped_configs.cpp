// Every config the project ships loads: a renamed key or option (a3c_train.yaml once kept
// `reward: epoch_time` after the reader stopped accepting it) fails here, not in a user's hands.
#include <doctest/doctest.h>

#include <exception>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "agents/policy_file.hpp"
#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/train_config.hpp"
#include "orchestra/rl_state.hpp"
#include "test_helpers.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> shipped_configs() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(ORCHESTRA_SOURCE_DIR) / "configs"))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  return files;
}

// A3C training configs have an a3c: section at the top level, and a cluster distribution that only
// `orchestra draw` reads (configs/draw_heldout_tenth.yaml) a clusters: section; the others are
// experiments. Both of the first kind load as training configs.
bool is_training_config(const fs::path& file) {
  const std::string text = testing::read_text(file);
  const auto has_section = [&](const std::string& key) { return text.rfind(key, 0) == 0 || text.find("\n" + key) != std::string::npos; };
  return has_section("a3c:") || has_section("clusters:");
}

// What two training recipes must share when BENCHMARKS compares them on one change: the task, the
// reward, the surrogate, the exploring starts and the learner's network, rate and batch of episodes.
void check_same_training(const experiments::TrainConfig& changed, const experiments::TrainConfig& base) {
  CHECK(changed.experiments == base.experiments);
  CHECK(changed.reward == base.reward);
  CHECK(changed.surrogate_file == base.surrogate_file);
  CHECK(changed.exploring_start.lo == base.exploring_start.lo);
  CHECK(changed.exploring_start.hi == base.exploring_start.hi);
  CHECK(changed.a3c.hidden == base.a3c.hidden);
  CHECK(changed.a3c.learning_rate == base.a3c.learning_rate);
  CHECK(changed.a3c.envs_per_agent == base.a3c.envs_per_agent);
}

// configs/NAME, read (its errors fail the test case).
experiments::TrainConfig shipped_recipe(const std::string& name) {
  experiments::TrainConfig config;
  REQUIRE_NOTHROW(config = experiments::load_train_config(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/" + name));
  return config;
}

// A recipe that changes only the moves of the wide one (`same_moves_as_wide` undoes the change on a
// copy of its control): the same controller otherwise, cluster distribution, training and length,
// so that BENCHMARKS' comparison measures the moves.
template <typename UndoChange>
void check_wide_recipe_but_moves(const experiments::TrainConfig& changed, const experiments::TrainConfig& wide, UndoChange same_moves_as_wide) {
  agents::PolicyControl same = changed.control;
  same_moves_as_wide(same);
  CHECK(same == wide.control);
  REQUIRE(changed.distribution.has_value());
  CHECK(changed.distribution->message_mb.hi == wide.distribution->message_mb.hi);
  CHECK(changed.distribution->inter_gbps.lo == wide.distribution->inter_gbps.lo);
  CHECK(changed.distribution->profiles.size() == wide.distribution->profiles.size());
  check_same_training(changed, wide);
  CHECK(changed.a3c.total_updates == wide.a3c.total_updates);
}

// configs/NAME's text from its name: line on, past that line, with `removed` taken out where it
// occurs: what a recipe that changes one key shares with its base.
std::string recipe_body(const std::string& name, const std::string& removed) {
  std::string text = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/" + name);
  text = text.substr(text.find("\nname: "));
  text = text.substr(text.find('\n', 1));  // past the name line
  if (const auto at = text.find(removed); at != std::string::npos) text.erase(at, removed.size());
  return text;
}

}  // namespace

TEST_CASE("every shipped config loads, and every policy in an experiment config builds") {
  const auto files = shipped_configs();
  REQUIRE(files.size() >= 20);
  int training = 0;
  for (const auto& file : files) {
    INFO(file.string());
    if (is_training_config(file)) {
      ++training;
      CHECK_NOTHROW(experiments::load_train_config(file.string()));
      continue;
    }
    experiments::ExperimentConfig config;
    REQUIRE_NOTHROW(config = experiments::load_config(file.string()));
    experiments::expand_sweeps(config);
    for (const auto& entry : config.policies) {
      try {
        experiments::make_policy(entry, config);
      } catch (const std::exception& e) {
        // A policy a user trains first (a3c_env_small.yaml deploys results/a3c_train/policy.pt)
        // may be missing; nothing else may fail.
        const std::string what = e.what();
        CHECK_MESSAGE((what.find("results/") != std::string::npos && what.find("cannot read") != std::string::npos), what);
      }
    }
  }
  CHECK(training >= 2);  // a3c_train.yaml and a3c_general.yaml
}

TEST_CASE("a run's resolved config.json reads back as a config (orchestra calibrate writes one from it)") {
  testing::TempDir dir;
  // orchestra-a3c with greedy actions: its entry refuses a seed, so the resolved entry must not hold one.
  const std::string tiny = R"(name: tiny
seed: 2
data:
  dataset: synthetic
  synthetic: {train: 256, test: 64, side: 6}
model: {arch: mlp, hidden: [8]}
training: {global_batch: 32, epochs: 1}
cluster:
  workers:
    - {name: fast, time_model: {coefficients: [1, 0.1]}, max_batch: 64}
    - {name: slow, time_model: {coefficients: [3, 0.4]}, max_batch: 64}
policies:
  - orchestra-lcm
  - {name: fixed-t, T_ms: 20}
  - {name: orchestra-random, move: multiplicative, factor: 2, interval: rounds, interval_rounds: 2}
  - lbb
  - {name: orchestra-a3c, policy: )" + std::string(ORCHESTRA_SOURCE_DIR) + R"(/pretrained/orchestra-a3c.pt}
)";
  testing::write_text(dir / "tiny.yaml", tiny);
  experiments::RunOptions options;
  options.quiet = true;
  options.out_dir = dir / "out";
  const auto result = experiments::run_experiment(experiments::load_config(dir / "tiny.yaml"), options);
  REQUIRE(result.outcomes.size() == 5);
  nlohmann::json rebuilt;
  for (const auto& label : {"orchestra-lcm", "fixed-t", "orchestra-random", "lbb", "orchestra-a3c"}) {
    nlohmann::json c = nlohmann::json::parse(testing::read_text(dir / ("out/" + std::string(label) + "/config.json")));
    nlohmann::json entry = c["policy"];
    for (auto it = entry.begin(); it != entry.end();)
      it = it->is_array() && it->empty() ? entry.erase(it) : std::next(it);
    for (const char* key : {"file", "real", "policy", "seeds"}) c.erase(key);
    if (rebuilt.is_null()) rebuilt = c;
    rebuilt["policies"].push_back(entry);
  }
  const std::string text = rebuilt.dump(1);
  INFO(text);
  experiments::ExperimentConfig config;
  REQUIRE_NOTHROW(config = experiments::parse_config(text, dir / "rebuilt.json"));
  REQUIRE(config.policies.size() == 5);
  for (const auto& entry : config.policies) CHECK_NOTHROW(experiments::make_policy(entry, config));
}

TEST_CASE("a training config's reward: eq1, time or log_time, recorded for the policy file, another is one clear line") {
  testing::TempDir dir;
  using Reward = orchestra::LocalSgdBarrierEnvConfig::Reward;
  const std::vector<std::pair<std::string, Reward>> rewards = {{"eq1", Reward::Eq1}, {"time", Reward::Time}, {"log_time", Reward::LogTime}};
  for (const auto& [name, reward] : rewards) {
    testing::write_text(dir / "train.yaml", "environment: toy\nreward: " + name + "\n");
    const experiments::TrainConfig config = experiments::load_train_config(dir / "train.yaml");
    CHECK(config.reward == reward);
    CHECK(config.training_info.at("reward") == name);
  }
  testing::write_text(dir / "train.yaml", "environment: toy\nreward: log\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "train.yaml"),
                       doctest::Contains("train.yaml:2: reward: expected one of eq1, time, log_time, got 'log'"), common::ConfigError);
}

TEST_CASE("a training config's move_cost_rounds: recorded for the policy file, refused without the time reward") {
  testing::TempDir dir;
  testing::write_text(dir / "train.yaml", "environment: toy\nreward: time\nmove_cost_rounds: 1.5\n");
  const experiments::TrainConfig config = experiments::load_train_config(dir / "train.yaml");
  CHECK(config.move_cost_rounds == 1.5);
  CHECK(config.training_info.at("move_cost_rounds") == "1.5");
  testing::write_text(dir / "train.yaml", "environment: toy\nreward: time\n");
  CHECK(experiments::load_train_config(dir / "train.yaml").training_info.count("move_cost_rounds") == 0);
  testing::write_text(dir / "train.yaml", "environment: toy\nreward: eq1\nmove_cost_rounds: 1\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "train.yaml"),
                       doctest::Contains("train.yaml:3: move_cost_rounds: is charged in the time reward's units; it needs reward: time"),
                       common::ConfigError);
  testing::write_text(dir / "train.yaml", "environment: toy\nreward: time\nmove_cost_rounds: -1\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "train.yaml"), doctest::Contains("train.yaml:3: move_cost_rounds"), common::ConfigError);
}

TEST_CASE("a training config's merge_episodes: recorded for the policy file, refused where there is nothing to merge") {
  testing::TempDir dir;
  const std::string task = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/controller_task.yaml";
  testing::write_text(dir / "train.yaml", "experiments: [" + task + "]\nmerge_episodes: true\na3c: {envs_per_agent: 4}\n");
  const experiments::TrainConfig config = experiments::load_train_config(dir / "train.yaml");
  CHECK(config.merge_episodes);
  CHECK(config.training_info.at("merge_episodes") == "true");
  testing::write_text(dir / "train.yaml", "experiments: [" + task + "]\na3c: {envs_per_agent: 4}\n");
  CHECK_FALSE(experiments::load_train_config(dir / "train.yaml").merge_episodes);
  testing::write_text(dir / "train.yaml", "experiments: [" + task + "]\nmerge_episodes: true\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "train.yaml"),
                       doctest::Contains("train.yaml:2: merge_episodes: merges an agent's environments; it needs a3c.envs_per_agent of 2 or more"),
                       common::ConfigError);
  testing::write_text(dir / "train.yaml", "experiments: [" + task + ", " + task + "]\nmerge_episodes: true\na3c: {envs_per_agent: 2}\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "train.yaml"),
                       doctest::Contains("train.yaml:2: merge_episodes: merged episodes train one model; it needs exactly one experiment, got 2"),
                       common::ConfigError);
  testing::write_text(dir / "train.yaml", "environment: toy\nmerge_episodes: true\na3c: {envs_per_agent: 2}\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "train.yaml"),
                       doctest::Contains("train.yaml:2: merge_episodes: merges real training; it needs environment: local-sgd"), common::ConfigError);
}

TEST_CASE("configs/a3c_surrogate.yaml: a3c_general's recipe on the shipped surrogate, K episodes an agent") {
  const std::string dir = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/";
  const auto general = experiments::load_train_config(dir + "a3c_general.yaml");
  experiments::TrainConfig fast;
  REQUIRE_NOTHROW(fast = experiments::load_train_config(dir + "a3c_surrogate.yaml"));  // reads the surrogate, checks its task
  CHECK(fast.environment == experiments::TrainEnvironment::Surrogate);
  REQUIRE(fast.surrogate != nullptr);
  CHECK(fs::path(fast.surrogate_file).filename() == "surrogate-controller-task.json");
  CHECK(fs::exists(fast.surrogate_file));
  CHECK(fast.a3c.envs_per_agent >= 2);
  CHECK(fast.a3c.snapshot_every > 0);
  // The same task, controller, reward and start as the recipe of today's pretrained policy, so the
  // two are compared on what they were trained with, not on what they were asked.
  CHECK(fast.experiments == general.experiments);
  CHECK(fast.observation_size == general.observation_size);
  CHECK(fast.control.move == general.control.move);
  CHECK(fast.control.factor == general.control.factor);
  CHECK(fast.control.interval == general.control.interval);
  REQUIRE(fast.distribution.has_value());
  CHECK(fast.reward == general.reward);
  CHECK(fast.time_reward_rounds == general.time_reward_rounds);
  CHECK(fast.max_reference_epochs == general.max_reference_epochs);
  CHECK(fast.exploring_start.lo == general.exploring_start.lo);
  CHECK(fast.exploring_start.hi == general.exploring_start.hi);
  CHECK(fast.a3c.hidden == general.a3c.hidden);
  CHECK(fast.a3c.gamma == general.a3c.gamma);
  CHECK(fast.a3c.n_steps == general.a3c.n_steps);
}

TEST_CASE("configs/a3c_surrogate_progress.yaml: the surrogate recipe with the state's progress entries, nothing else changed") {
  const std::string dir = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/";
  const auto base = experiments::load_train_config(dir + "a3c_surrogate.yaml");
  experiments::TrainConfig progress;
  REQUIRE_NOTHROW(progress = experiments::load_train_config(dir + "a3c_surrogate_progress.yaml"));
  CHECK(base.control.state_features == orchestra::StateFeatures::Base);
  CHECK(base.observation_size == orchestra::StateLayout::kStateSize);
  CHECK(progress.control.state_features == orchestra::StateFeatures::Progress);
  CHECK(progress.observation_size == orchestra::StateLayout::kProgressStateSize);
  // Only the state differs, so the comparison in BENCHMARKS measures it.
  agents::PolicyControl same = progress.control;
  same.state_features = orchestra::StateFeatures::Base;
  CHECK(same == base.control);
  CHECK(progress.experiments == base.experiments);
  CHECK(progress.reward == base.reward);
  CHECK(progress.surrogate_file == base.surrogate_file);
  CHECK(progress.a3c.hidden == base.a3c.hidden);
  CHECK(progress.a3c.learning_rate == base.a3c.learning_rate);
  CHECK(progress.a3c.envs_per_agent == base.a3c.envs_per_agent);
  CHECK(progress.a3c.entropy_coef == base.a3c.entropy_coef);
  CHECK(progress.a3c.seed == base.a3c.seed);
}

TEST_CASE("configs/a3c_surrogate_wide.yaml: the surrogate recipe on clusters with more communication, nothing else changed") {
  const std::string dir = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/";
  const auto base = experiments::load_train_config(dir + "a3c_surrogate.yaml");
  experiments::TrainConfig wide;
  REQUIRE_NOTHROW(wide = experiments::load_train_config(dir + "a3c_surrogate_wide.yaml"));
  REQUIRE(base.distribution.has_value());
  REQUIRE(wide.distribution.has_value());
  CHECK(wide.distribution->message_mb.hi == 2000);
  CHECK(wide.distribution->inter_gbps.lo == 0.5);
  // Only those two ranges differ, so the comparison in BENCHMARKS measures them.
  auto same = *wide.distribution;
  same.message_mb = base.distribution->message_mb;
  same.inter_gbps = base.distribution->inter_gbps;
  CHECK(same.servers.lo == base.distribution->servers.lo);
  CHECK(same.total_workers.hi == base.distribution->total_workers.hi);
  CHECK(same.profiles.size() == base.distribution->profiles.size());
  CHECK(same.intra_gbps.lo == base.distribution->intra_gbps.lo);
  CHECK(same.slowdown_probability == base.distribution->slowdown_probability);
  CHECK(same.cyclic_probability == base.distribution->cyclic_probability);
  CHECK(wide.distribution->message_mb.lo == base.distribution->message_mb.lo);
  CHECK(wide.distribution->inter_gbps.hi == base.distribution->inter_gbps.hi);
  CHECK(wide.control == base.control);
  check_same_training(wide, base);
  CHECK(wide.a3c.seed == base.a3c.seed);
}

TEST_CASE("configs/a3c_surrogate_f4.yaml: the wide recipe with moves of x4, nothing else changed") {
  const auto wide = shipped_recipe("a3c_surrogate_wide.yaml");
  const auto f4 = shipped_recipe("a3c_surrogate_f4.yaml");
  CHECK(f4.control.factor == 4);
  CHECK(wide.control.factor == 2);
  CHECK(f4.a3c.seed == 13);
  check_wide_recipe_but_moves(f4, wide, [&](agents::PolicyControl& c) { c.factor = wide.control.factor; });
  // The shipped policy's network was trained by it and deploys its moves (the file it redeploys,
  // with LCM's start and the recipe's bounds, is pretrained/candidates/genet-s14-3-2000.pt).
  const auto shipped = agents::A3cPolicy::load(std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/candidates/genet-s14-3-2000.pt");
  CHECK(shipped.control() == f4.control);
  // pretrained/orchestra-a3c.pt records a planned start besides: as trained, the same controller.
  const auto deployed = agents::A3cPolicy::load(std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/orchestra-a3c.pt");
  CHECK_FALSE(deployed.control() == f4.control);
  CHECK(deployed.control().as_trained() == f4.control);
}

TEST_CASE("configs/a3c_surrogate_m2.yaml: the wide recipe with moves of x2 and x4, nothing else changed") {
  const auto wide = shipped_recipe("a3c_surrogate_wide.yaml");
  const auto m2 = shipped_recipe("a3c_surrogate_m2.yaml");
  CHECK(m2.control.max_move == 2);
  CHECK(wide.control.max_move == 1);
  check_wide_recipe_but_moves(m2, wide, [&](agents::PolicyControl& c) { c.max_move = wide.control.max_move; });

  // Its fine-tuning from the shipped network: the same recipe, started from that network laid out
  // as five moves, at a lower rate.
  const auto finetune = shipped_recipe("a3c_surrogate_m2_finetune.yaml");
  CHECK(finetune.control == m2.control);
  CHECK(finetune.experiments == m2.experiments);
  CHECK(finetune.surrogate_file == m2.surrogate_file);
  CHECK(finetune.a3c.hidden == m2.a3c.hidden);
  CHECK(finetune.a3c.learning_rate < m2.a3c.learning_rate);
  CHECK(finetune.a3c.init_policy.find("pretrained/candidates/x4-as-five-moves.pt") != std::string::npos);
}

TEST_CASE("pretrained/candidates/x4-as-five-moves.pt acts as the shipped x4 network: its +-2 moves of x2 are the x4 moves") {
  const std::string dir = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/";
  // The x4 network shipped until 2026-11-29 (the shipped one since is it fine-tuned, configs/genet/seed14/).
  agents::A3cPolicy shipped = agents::A3cPolicy::load(dir + "candidates/f4-s13-8000.pt");
  agents::A3cPolicy five = agents::A3cPolicy::load(dir + "candidates/x4-as-five-moves.pt");
  REQUIRE(shipped.control().factor == 4);
  REQUIRE(shipped.control().max_move == 1);
  CHECK(five.control().factor == 2);
  CHECK(five.control().max_move == 2);
  // Random states within the state's bounds (rl_state.hpp): the same move of T on every one.
  const orchestra::StateBounds bounds = orchestra::state_bounds(shipped.control().state_features);
  std::mt19937_64 rng(3);
  std::set<int> seen;
  for (int k = 0; k < 5000; ++k) {
    std::vector<float> state(bounds.low.size());
    for (std::size_t i = 0; i < state.size(); ++i)
      state[i] = bounds.low[i] + static_cast<float>(static_cast<double>(rng() >> 11) / 9007199254740992.0) * (bounds.high[i] - bounds.low[i]);
    const int move = shipped.predict(state);
    CHECK(five.predict(state) == 2 * move);
    seen.insert(move);
  }
  CHECK(seen.size() >= 2);  // the states are varied enough to move T more than one way
}

TEST_CASE("the policies of pretrained/candidates/ load, with the state and interval the shipped policy's network was trained with") {
  // The shipped network as trained (LCM's start, the recipe's bounds): pretrained/orchestra-a3c.pt
  // deploys it from the plan, bounded around it (orchestra redeploy).
  const auto shipped = agents::A3cPolicy::load(std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/candidates/genet-s14-3-2000.pt");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(ORCHESTRA_SOURCE_DIR) / "pretrained" / "candidates")) {
    if (entry.path().extension() != ".pt") continue;
    INFO(entry.path().string());
    ++files;
    agents::A3cPolicy candidate = agents::A3cPolicy::load(entry.path().string());
    CHECK(candidate.observation_size() == shipped.observation_size());
    // The same decisions and bounds; the factor of a move is each one's own (the x2 networks shipped
    // before against today's x4 is the comparison pretrained/candidates/README.md records).
    agents::PolicyControl same = candidate.control();
    same.factor = shipped.control().factor;
    same.max_move = shipped.control().max_move;
    CHECK(same == shipped.control());
  }
  CHECK(files >= 2);
}

TEST_CASE("configs/a3c_surrogate_steal.yaml: the f4 recipe on the task under shards: steal, the floor at T*/16, nothing else changed") {
  const auto f4 = shipped_recipe("a3c_surrogate_f4.yaml");
  const auto steal = shipped_recipe("a3c_surrogate_steal.yaml");
  // Its task is the controller task with the one key changed.
  REQUIRE(steal.experiments.size() == 1);
  REQUIRE(f4.experiments.size() == 1);
  const auto task = experiments::load_config(f4.experiments.front());
  const auto task_steal = experiments::load_config(steal.experiments.front());
  CHECK(task.training.shards == env::ShardRule::Epoch);
  CHECK(task_steal.training.shards == env::ShardRule::Steal);
  nlohmann::json resolved_steal = task_steal.resolved;
  resolved_steal["training"]["shards"] = "epoch";
  resolved_steal["file"] = task.resolved["file"];
  CHECK(resolved_steal == task.resolved);
  // The controller: only the floor.
  CHECK(steal.control.min_barrier_x_start == doctest::Approx(0.0625));
  agents::PolicyControl same = steal.control;
  same.min_barrier_x_start = f4.control.min_barrier_x_start;
  CHECK(same == f4.control);
  // The rest of the recipe, its task and floor aside (compared above): the checks of a recipe that
  // changes only its moves, with no move changed.
  experiments::TrainConfig same_task = steal;
  same_task.experiments = f4.experiments;
  same_task.control = same;
  check_wide_recipe_but_moves(same_task, f4, [](agents::PolicyControl&) {});
  CHECK(steal.a3c.seed == f4.a3c.seed);
}

TEST_CASE("configs/a3c_surrogate_equal.yaml: the f4 recipe with a quarter of the clusters equal workers, nothing else changed, and _cap.yaml adds the floor in steps") {
  const auto f4 = shipped_recipe("a3c_surrogate_f4.yaml");
  const auto equal = shipped_recipe("a3c_surrogate_equal.yaml");
  REQUIRE(equal.distribution.has_value());
  CHECK(equal.distribution->equal_workers == 0.25);
  CHECK(f4.distribution->equal_workers == 0);
  // The files from their name: line on, with that line and the one key aside, are the same text:
  // every other key (distribution, controller, reward, A3C, seed) is f4's.
  const std::string key = "  equal_workers: 0.25\n";
  CHECK(recipe_body("a3c_surrogate_equal.yaml", key) == recipe_body("a3c_surrogate_f4.yaml", key));
  CHECK(equal.control == f4.control);
  check_same_training(equal, f4);
  CHECK(equal.a3c.seed == f4.a3c.seed);

  // Its variant with the floor in steps: only the controller's floor_cap_steps.
  const auto cap = shipped_recipe("a3c_surrogate_equal_cap.yaml");
  CHECK(cap.control.floor_cap_steps == 2);
  agents::PolicyControl same = cap.control;
  same.floor_cap_steps = 0;
  CHECK(same == equal.control);
  CHECK(cap.distribution->equal_workers == 0.25);
  check_same_training(cap, equal);
  CHECK(cap.a3c.seed == equal.a3c.seed);
  CHECK(cap.a3c.total_updates == equal.a3c.total_updates);
}

TEST_CASE("configs/a3c_surrogate_tcap.yaml: the f4 recipe with the anchor capped at 4 steps or C / 2, nothing else changed") {
  const auto f4 = shipped_recipe("a3c_surrogate_f4.yaml");
  const auto tcap = shipped_recipe("a3c_surrogate_tcap.yaml");
  CHECK(tcap.control.lcm_cap_steps == 4);
  CHECK(tcap.control.lcm_cap_x_comm == 0.5);
  CHECK(f4.control.lcm_cap_steps == 0);
  CHECK(f4.control.lcm_cap_x_comm == 0);
  agents::PolicyControl same = tcap.control;
  same.lcm_cap_steps = 0;
  same.lcm_cap_x_comm = 0;
  CHECK(same == f4.control);
  // From the name: line on, with that line and the two keys aside, the files are the same text.
  const std::string keys = ", T_cap_steps: 4, T_cap_x_comm: 0.5";
  CHECK(recipe_body("a3c_surrogate_tcap.yaml", keys) == recipe_body("a3c_surrogate_f4.yaml", keys));
  check_same_training(tcap, f4);
  CHECK(tcap.a3c.seed == f4.a3c.seed);
  CHECK(tcap.a3c.total_updates == f4.a3c.total_updates);
}

TEST_CASE("configs/a3c_surrogate_plateau.yaml: the f4 recipe on the task at 86% within 10 epochs, its episodes as long as the budget, nothing else changed") {
  const auto f4 = shipped_recipe("a3c_surrogate_f4.yaml");
  const auto plateau = shipped_recipe("a3c_surrogate_plateau.yaml");
  REQUIRE(plateau.experiments.size() == 1);
  REQUIRE(f4.experiments.size() == 1);
  // Its task is the controller task with the two keys changed (and its name).
  const auto task = experiments::load_config(f4.experiments.front());
  const auto task_plateau = experiments::load_config(plateau.experiments.front());
  CHECK(task_plateau.budget.epochs == 10);
  CHECK(task_plateau.budget.target_accuracy == 0.86);
  nlohmann::json resolved = task_plateau.resolved;
  resolved["training"]["epochs"] = task.budget.epochs;
  resolved["training"]["target_accuracy"] = task.budget.target_accuracy;
  resolved["name"] = task.resolved["name"];
  resolved["file"] = task.resolved["file"];
  CHECK(resolved == task.resolved);
  // The recipe: from the name: line on, the same text as f4's but for the task and the episode's cap.
  CHECK(plateau.max_reference_epochs == 10);
  CHECK(f4.max_reference_epochs == 3);
  std::string body = recipe_body("a3c_surrogate_plateau.yaml", "");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"  - controller_task_plateau.yaml\n", "  - controller_task.yaml\n"},
           {"max_reference_epochs: 10          # the task's budget (controller_task_plateau.yaml)\n", "max_reference_epochs: 3\n"}}) {
    const auto at = body.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    body.replace(at, from.size(), to);
  }
  CHECK(body == recipe_body("a3c_surrogate_f4.yaml", ""));
}

TEST_CASE("configs/genet/stage-k.yaml and seed14/ to seed16/: the f4 recipe fine-tuned from the previous stage, half its episodes on the focus clusters so far, nothing else changed") {
  const auto f4 = shipped_recipe("a3c_surrogate_f4.yaml");
  struct Run {
    std::string folder, up, seed;
    std::vector<std::string> starts;
  };
  const std::vector<Run> runs = {
      {"genet/", "../", "13", {"pretrained/candidates/f4-s13-8000.pt", "pretrained/candidates/genet-1-3000.pt", "pretrained/candidates/genet-2-3000.pt"}},
      {"genet/seed14/", "../../", "14",
       {"pretrained/candidates/f4-s13-8000.pt", "pretrained/candidates/genet-s14-1-3000.pt", "pretrained/candidates/genet-s14-2-3000.pt"}},
      {"genet/seed15/", "../../", "15",
       {"pretrained/candidates/f4-s13-8000.pt", "pretrained/candidates/genet-s15-1-3000.pt", "pretrained/candidates/genet-s15-2-3000.pt"}},
      {"genet/seed16/", "../../", "16",
       {"pretrained/candidates/f4-s13-8000.pt", "pretrained/candidates/genet-s16-1-3000.pt", "pretrained/candidates/genet-s16-2-3000.pt"}}};
  for (const Run& run : runs) {
    std::size_t focus_before = 0;
    for (int k = 1; k <= 3; ++k) {
      const std::string name = run.folder + "stage-" + std::to_string(k) + ".yaml";
      CAPTURE(name);
      const auto stage = shipped_recipe(name);
      const std::string& start = run.starts[static_cast<std::size_t>(k - 1)];
      CHECK(stage.control == f4.control);
      CHECK(fs::weakly_canonical(stage.experiments.front()) == fs::weakly_canonical(f4.experiments.front()));
      CHECK(fs::weakly_canonical(stage.surrogate_file) == fs::weakly_canonical(f4.surrogate_file));
      CHECK(stage.a3c.init_policy.find(start) != std::string::npos);
      CHECK(stage.a3c.learning_rate == 0.0002);
      CHECK(stage.a3c.total_updates == 3000);
      CHECK(stage.focus_share == 0.5);
      REQUIRE(stage.focus_files.size() == static_cast<std::size_t>(k));  // every stage's hardest so far
      CHECK(stage.focus_draws.size() > focus_before);
      focus_before = stage.focus_draws.size();
      // From the name: line on, f4's text but for the paths, the start, the rate, the length, the seed and focus:.
      std::string body = recipe_body(name, "");
      for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
               {"surrogate: ../" + run.up + "pretrained/", "surrogate: ../pretrained/"},
               {"  - " + run.up + "controller_task.yaml\n", "  - controller_task.yaml\n"},
               {"  init_policy: ../" + run.up + start + "\n  learning_rate: 0.0002\n", "  learning_rate: 0.0007\n"},
               {"  total_updates: 3000\n", "  total_updates: 12000          # 194,298 episodes in about 7 min on 2 shared cores\n"},
               {"  seed: " + run.seed + "\n", "  seed: 13\n"}}) {
        const auto at = body.find(from);
        REQUIRE_MESSAGE(at != std::string::npos, from);
        body.replace(at, from.size(), to);
      }
      const auto focus = body.find("\nfocus: ");
      REQUIRE(focus != std::string::npos);
      body.erase(focus, body.find('\n', focus + 1) - focus + 1);  // the line and the blank line it added
      CHECK(body == recipe_body("a3c_surrogate_f4.yaml", ""));
    }
  }
  // The shipped policy's network is the seed-14 run's third stage, so it deploys the f4 recipe's moves.
  CHECK(agents::A3cPolicy::load(std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/candidates/genet-s14-3-2000.pt").control() == f4.control);
}
