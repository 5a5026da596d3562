// `orchestra surrogate hardest` and a training config's focus: (Genet's curriculum, issue 41): the
// gaps it reports are the policy's time over the best static T's on the same episode, recomputed
// here from the environment directly; the order is hardest first; the same seed gives the same
// file; a training config reads the file back and its episodes then run those clusters.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/policy_file.hpp"
#include "common/errors.hpp"
#include "experiments/runner/hardest_clusters.hpp"
#include "experiments/runner/train_config.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/vector_barrier_env.hpp"
#include "test_helpers.hpp"

namespace {

const std::string kSource = ORCHESTRA_SOURCE_DIR;
// The shipped network as trained (LCM's start and the f4 recipe's bounds, which the search sweeps).
const std::string kPolicy = kSource + "/pretrained/candidates/genet-s14-3-2000.pt";
const std::string kSurrogateConfig = kSource + "/configs/a3c_surrogate_f4.yaml";

// One episode of `base` from seed, T held at T* x start_factor (policy null) or moved by the policy.
double episode_seconds(orchestra::LocalSgdBarrierEnvConfig base, std::uint64_t seed, double start_factor, agents::A3cPolicy* policy,
                       bool* reached) {
  base.exploring_start = orchestra::Range{start_factor, start_factor, true};
  orchestra::LocalSgdBarrierEnv env(base);
  std::vector<float> observation = env.reset(seed).observation;
  while (true) {
    const auto step = env.step(policy ? policy->predict(observation, true) : 0);
    if (step.terminated || step.truncated) {
      *reached = step.terminated;
      return step.info.clock_ms / 1000.0;
    }
    observation = step.observation;
  }
}

}  // namespace

TEST_CASE("surrogate hardest: each gap is the policy's time over the best static T's on that episode, hardest first, one result per seed") {
  const experiments::TrainConfig config = experiments::load_train_config(kSurrogateConfig);
  experiments::HardestSearchOptions options;
  options.candidates = 12;
  options.keep = 4;
  options.seed = 7;
  const auto result = experiments::find_hardest_clusters(config, agents::A3cPolicy::load(kPolicy), options);
  CHECK(result.candidates == 12);
  CHECK(static_cast<int>(result.clusters.size()) + result.incomparable == 12);
  REQUIRE(result.clusters.size() >= 8);
  CHECK(result.sweep_x_start == std::vector<double>{0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32});  // the controller's range, by twos
  double log_sum = 0;
  for (std::size_t i = 0; i < result.clusters.size(); ++i) {
    const auto& c = result.clusters[i];
    CAPTURE(i);
    CHECK(c.gap == doctest::Approx(c.policy_s / c.best_static_s));
    log_sum += std::log(c.gap);
    if (i > 0 && result.clusters[i - 1].policy_reached == c.policy_reached) CHECK(result.clusters[i - 1].gap >= c.gap);
    if (i > 0) CHECK((!result.clusters[i - 1].policy_reached || c.policy_reached));  // misses first
  }
  CHECK(result.geomean_gap == doctest::Approx(std::exp(log_sum / static_cast<double>(result.clusters.size()))));

  // The hardest one, recomputed: the policy's episode and the sweep's, on the candidate's seed.
  const auto& hardest = result.clusters.front();
  orchestra::LocalSgdBarrierEnvConfig base = experiments::training_env_config(config, 0);
  CHECK(hardest.draw_seed == orchestra::cluster_draw_seed(base, hardest.episode_seed));
  bool found = false;
  for (int i = 0; i < options.candidates; ++i) found = found || orchestra::episode_seed(7, static_cast<std::uint64_t>(i)) == hardest.episode_seed;
  CHECK(found);
  agents::A3cPolicy policy = agents::A3cPolicy::load(kPolicy);
  bool reached = false;
  CHECK(episode_seconds(base, hardest.episode_seed, 1.0, &policy, &reached) == doctest::Approx(hardest.policy_s));
  CHECK(reached == hardest.policy_reached);
  double best = 0;
  double best_x = 0;
  for (const double x : result.sweep_x_start) {
    const double s = episode_seconds(base, hardest.episode_seed, x, nullptr, &reached);
    if (reached && (best == 0 || s < best)) {
      best = s;
      best_x = x;
    }
  }
  CHECK(best == doctest::Approx(hardest.best_static_s));
  CHECK(best_x == hardest.best_static_x_start);
  // The candidates differ: the hardest reached one trails by more than the easiest.
  const auto first_reached = std::find_if(result.clusters.begin(), result.clusters.end(), [](const auto& c) { return c.policy_reached; });
  REQUIRE(first_reached != result.clusters.end());
  CHECK(first_reached->gap > result.clusters.back().gap);

  // The shipped file is this network with a planned start recorded for deployment: the search,
  // like training, starts at LCM's T*, so it finds the same clusters.
  const auto again = experiments::find_hardest_clusters(config, agents::A3cPolicy::load(kSource + "/pretrained/orchestra-a3c.pt"), options);
  REQUIRE(again.clusters.size() == result.clusters.size());
  for (std::size_t i = 0; i < again.clusters.size(); ++i) {
    CHECK(again.clusters[i].episode_seed == result.clusters[i].episode_seed);
    CHECK(again.clusters[i].policy_s == result.clusters[i].policy_s);
  }
}

TEST_CASE("orchestra surrogate hardest: the file a training config reads as focus, whose clusters its episodes then run, and bad files and configs refused") {
  testing::TempDir dir;
  const std::string bin = ORCHESTRA_BINARY;
  const auto run = testing::run_command(bin + " surrogate hardest " + kPolicy + " " + kSurrogateConfig + " --candidates 10 --keep 3 --seed 5 --out " +
                                        (dir / "focus.json") + " --quiet");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  CHECK(run.output.find("10 candidates: the policy") != std::string::npos);
  const auto doc = nlohmann::json::parse(testing::read_text(dir / "focus.json"));
  CHECK(doc["format"] == "orchestra-focus-clusters");
  CHECK(doc["candidates"] == 10);
  REQUIRE(doc["clusters"].size() == 3);
  const auto draws = experiments::read_focus_draws(dir / "focus.json");
  REQUIRE(draws.size() == 3);
  CHECK(draws[0] == doc["clusters"][0]["draw_seed"].get<std::uint64_t>());
  const auto rerun = testing::run_command(bin + " surrogate hardest " + kPolicy + " " + kSurrogateConfig + " --candidates 10 --keep 3 --seed 5 --out " +
                                          (dir / "again.json") + " --quiet");
  REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.output);
  CHECK(testing::read_text(dir / "again.json") == testing::read_text(dir / "focus.json"));  // the same seed, the same file
  // --out replaces a focus file, not a config given by a slip of the path.
  testing::write_text(dir / "mine.yaml", "name: mine\n");
  const auto slip = testing::run_command(bin + " surrogate hardest " + kPolicy + " " + kSurrogateConfig + " --candidates 10 --keep 3 --out " + (dir / "mine.yaml"));
  CHECK(slip.exit_code == 2);
  CHECK(slip.output.find("--out " + (dir / "mine.yaml") + ": holds a file that is not a focus-clusters file") != std::string::npos);
  CHECK(testing::read_text(dir / "mine.yaml") == "name: mine\n");

  // A training config with focus: every episode (share 1) on one of the three clusters.
  std::string yaml = testing::read_text(kSurrogateConfig);
  yaml.replace(yaml.find("surrogate: ../"), 14, "surrogate: " + kSource + "/");
  yaml.replace(yaml.find("  - controller_task.yaml"), 24, "  - " + kSource + "/configs/controller_task.yaml");
  testing::write_text(dir / "train.yaml", yaml + "focus: {files: [focus.json], share: 1}\n");
  const experiments::TrainConfig focused = experiments::load_train_config(dir / "train.yaml");
  CHECK(focused.focus_draws == draws);
  CHECK(focused.focus_share == 1.0);
  CHECK(focused.training_info.at("focus") == "3 focus clusters, share 1");
  const auto env_config = experiments::training_env_config(focused, 0);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const std::uint64_t draw = orchestra::cluster_draw_seed(env_config, seed);
    CHECK((draw == draws[0] || draw == draws[1] || draw == draws[2]));
  }
  // The search itself draws from the distribution, not the focus: the same candidates either way.
  experiments::HardestSearchOptions small;
  small.candidates = 3;
  const auto plain = experiments::find_hardest_clusters(experiments::load_train_config(kSurrogateConfig), agents::A3cPolicy::load(kPolicy), small);
  const auto from_focused = experiments::find_hardest_clusters(focused, agents::A3cPolicy::load(kPolicy), small);
  REQUIRE(plain.clusters.size() == from_focused.clusters.size());
  for (std::size_t i = 0; i < plain.clusters.size(); ++i) CHECK(plain.clusters[i].draw_seed == from_focused.clusters[i].draw_seed);

  // Bad focus files and keys: one line naming the config's line and the file.
  testing::write_text(dir / "broken.json", "{\"format\": \"orchestra-focus-clusters\", \"format_version\": 1, \"clusters\": [{\"draw_seed\": -4}]}");
  testing::write_text(dir / "bad1.yaml", yaml + "focus: {files: [broken.json]}\n");
  const std::string bad1_message = "focus.files: " + (dir / "broken.json") + ": clusters[0]: expected draw_seed";
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "bad1.yaml"), doctest::Contains(bad1_message.c_str()), common::ConfigError);
  testing::write_text(dir / "other.json", "{\"format\": \"something else\"}");
  testing::write_text(dir / "bad2.yaml", yaml + "focus: {files: [other.json]}\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "bad2.yaml"), doctest::Contains("not a focus-clusters file"), common::ConfigError);
  testing::write_text(dir / "bad3.yaml", yaml + "focus: {files: [missing.json]}\n");
  const std::string bad3_message = "focus.files: " + (dir / "missing.json") + ": cannot read";
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "bad3.yaml"), doctest::Contains(bad3_message.c_str()), common::ConfigError);
  testing::write_text(dir / "bad4.yaml", yaml + "focus: {files: [focus.json], share: 1.5}\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "bad4.yaml"), doctest::Contains("focus.share"), common::ConfigError);
  std::string no_clusters = yaml.substr(0, yaml.find("clusters:")) + yaml.substr(yaml.find("controller: {"));
  testing::write_text(dir / "bad5.yaml", no_clusters + "focus: {files: [focus.json]}\n");
  CHECK_THROWS_WITH_AS(experiments::load_train_config(dir / "bad5.yaml"), doctest::Contains("focus: focus clusters are draws of the clusters: distribution"),
                       common::ConfigError);

  // A policy trained with other moves is refused by the command, one line, exit 2.
  const auto other = testing::run_command(bin + " surrogate hardest " + kSource + "/pretrained/candidates/surrogate-wide-s12-8000.pt " + kSurrogateConfig +
                                          " --candidates 2 --out " + (dir / "x.json"));
  CHECK(other.exit_code == 2);
  CHECK(other.output.find("was trained with another controller") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "x.json"));
}
