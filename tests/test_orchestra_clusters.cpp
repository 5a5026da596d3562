// Issue 4's claims on the Orchestra cluster configs, end to end (real training of the configs' MLP
// on Fashion-MNIST, simulated clock): orchestra-lcm reaches the target accuracy in at least 40% less
// simulated time than dsgd on cluster C, and sooner than local-sgd on clusters A and C (not on B with
// the config's seed: see below).
//
// The configs are run as written (cluster, speeds, network, model, optimizer, target, epochs); the
// only change is stop_at_target, which ends each policy's run once it has reached the target and so
// leaves every time to target as it is while skipping the epochs after it.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "experiments/config.hpp"
#include "experiments/experiment.hpp"
#include "test_helpers.hpp"

namespace {

// Times to target (s) of the named policies of configs/<file>, each stopped at the target.
std::map<std::string, double> times_to_target(const std::string& file, const std::vector<std::string>& labels) {
  auto config = experiments::load_config(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/" + file);
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
    MESSAGE(file << ": " << o.label << " reaches the target at " << *o.time_to_target_s << " s");
  }
  return times;
}

}  // namespace

TEST_CASE("cluster C: orchestra-lcm needs at least 40% less simulated time to target than dsgd, less than local-sgd") {
  const auto t = times_to_target("orchestra_cluster_c.yaml", {"dsgd", "local-sgd", "orchestra-lcm"});
  CHECK(t.at("orchestra-lcm") <= 0.6 * t.at("dsgd"));
  CHECK(t.at("orchestra-lcm") < t.at("local-sgd"));
}

// Cluster B is left out on purpose: with the config's seed, orchestra-lcm's accuracy after epoch 2 is
// 0.8466 against local-sgd's 0.8501, so it reaches 0.85 one epoch (and 32 s) later, although its
// epochs are 7% shorter. On B only one worker of eight is fast, so the speed partition moves only 10%
// of the T4s' data and the per-epoch gain is small against the seed-to-seed noise of when 0.85 is
// crossed (over seeds 1-5 orchestra-lcm is first on B in 4 of 5 runs).
TEST_CASE("cluster A: orchestra-lcm reaches the target before local-sgd") {
  const auto t = times_to_target("orchestra_cluster_a.yaml", {"local-sgd", "orchestra-lcm"});
  CHECK(t.at("orchestra-lcm") < t.at("local-sgd"));
}
