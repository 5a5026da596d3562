// Issue 4's claims on the Orchestra cluster configs, end to end (real training of the configs' MLP
// on Fashion-MNIST, simulated clock): orchestra-lcm reaches the target accuracy in at least 40% less
// simulated time than dsgd on cluster C, and sooner than local-sgd on clusters A, B and C.
//
// "Sooner than local-sgd" is compared as the mean over three seeds (the config's 11, then 1 and 2).
// orchestra-lcm's epochs are 7% (B) to 24% (C) shorter than local-sgd's, but when a run first
// crosses 0.85 moves by several rounds from seed to seed (accuracy near the target wobbles by about
// a point between evaluations), so a single seed can go either way: over seeds 11, 1-4 orchestra-lcm
// is first in 3 of 5 runs on A, 4 of 5 on B, 3 of 4 on C, and first on the mean of every cluster
// (BENCHMARKS.md, "Orchestra clusters").
//
// The configs are run as written (cluster, speeds, network, model, optimizer, target, epochs,
// evaluation every 2 rounds); the only changes are the seed and stop_at_target, which ends each
// policy's run once it has reached the target and so leaves every time to target as it is while
// skipping the epochs after it.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"
#include "experiments/runner/experiment.hpp"
#include "test_helpers.hpp"

namespace {

// Times to target (s) of the named policies of configs/<file>, each stopped at the target.
std::map<std::string, double> times_to_target(const std::string& file, const std::vector<std::string>& labels,
                                              std::uint64_t seed = 0) {
  auto config = experiments::load_config(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/" + file);
  config.data.path = testing::fashion_mnist_dir();
  if (seed != 0) config.seed = seed;
  std::vector<experiments::PolicyConfig> kept;
  for (const auto& p : config.policies)
    for (const auto& l : labels)
      if (p.label == l) kept.push_back(p);
  REQUIRE(kept.size() == labels.size());
  // Swapped, not copy-assigned: assigning over a YAML::Node re-points the node it referred to (yaml-cpp's
  // reference semantics), which would rewrite the other entries' parameters in the parsed tree.
  config.policies.swap(kept);
  config.budget.stop_at_target = true;
  config.write_rounds = false;
  testing::TempDir dir;
  experiments::RunOptions options;
  options.out_dir = dir / "results";
  options.quiet = true;
  const auto result = experiments::run_experiment(config, options);
  std::map<std::string, double> times;
  for (const auto& o : result.outcomes) {
    INFO(o.label << ": final accuracy " << o.final_accuracy << ", target " << config.budget.target_accuracy);
    REQUIRE(o.time_to_target_s.has_value());
    times[o.label] = *o.time_to_target_s;
    MESSAGE(file << " seed " << config.seed << ": " << o.label << " reaches the target at " << *o.time_to_target_s << " s");
  }
  return times;
}

// Mean time to target of each label over the config's seed and seeds 1 and 2.
std::map<std::string, double> mean_times_to_target(const std::string& file, const std::vector<std::string>& labels) {
  std::map<std::string, double> mean;
  const std::vector<std::uint64_t> seeds = {0, 1, 2};  // 0: the config's own
  for (const auto seed : seeds)
    for (const auto& [label, t] : times_to_target(file, labels, seed)) mean[label] += t / static_cast<double>(seeds.size());
  return mean;
}

}  // namespace

TEST_CASE("cluster C: orchestra-lcm needs at least 40% less simulated time to target than dsgd") {
  if (!testing::fashion_mnist_or_skip()) return;
  const auto t = times_to_target("orchestra_cluster_c.yaml", {"dsgd", "orchestra-lcm"});
  CHECK(t.at("orchestra-lcm") <= 0.6 * t.at("dsgd"));
}

namespace {

void check_before_local_sgd(const std::string& cluster) {
  if (!testing::fashion_mnist_or_skip()) return;
  const auto t = mean_times_to_target("orchestra_cluster_" + cluster + ".yaml", {"local-sgd", "orchestra-lcm"});
  MESSAGE("cluster " << cluster << ": mean time to target over 3 seeds: local-sgd " << t.at("local-sgd")
                     << " s, orchestra-lcm " << t.at("orchestra-lcm") << " s");
  CHECK(t.at("orchestra-lcm") < t.at("local-sgd"));
}

}  // namespace

TEST_CASE("cluster A: orchestra-lcm reaches the target before local-sgd (mean of three seeds)") { check_before_local_sgd("a"); }
TEST_CASE("cluster B: orchestra-lcm reaches the target before local-sgd (mean of three seeds)") { check_before_local_sgd("b"); }
TEST_CASE("cluster C: orchestra-lcm reaches the target before local-sgd (mean of three seeds)") { check_before_local_sgd("c"); }
