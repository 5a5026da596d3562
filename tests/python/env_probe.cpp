// What the C++ side computes, as JSON, for the Python module's tests to compare with (the way
// policy_probe does for check_policy_file.py):
//
//   env_probe episode TRAIN_CONFIG INDEX SEED MOVES
//       the environment `orchestra train` makes (load_train_config, make_training_env(config,
//       INDEX)) reset with SEED and stepped with MOVES (comma-separated -1, 0, +1; stops where the
//       episode ends): every observation, reward, flag and info
//   env_probe greedy POLICY COUNT SEED
//       COUNT observations drawn uniformly within the state's bounds (orchestra/rl_state.hpp) from
//       SEED, and the move the `orchestra-a3c` controller's agent (agents::GreedyBarrierAgent)
//       takes in each
//
// One libtorch thread, as the Python environment's default.
#include <cstdint>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/greedy_barrier_agent.hpp"
#include "agents/policy_file.hpp"
#include "env/train/compute_threads.hpp"
#include "experiments/runner/train_config.hpp"
#include "orchestra/rl_state.hpp"

namespace {

nlohmann::json info_json(const orchestra::StepInfo& i) {
  return {{"epoch", i.epoch},         {"rounds", i.rounds},     {"barrier_ms", i.barrier_ms},
          {"step_ms", i.step_ms},     {"clock_ms", i.clock_ms}, {"accuracy", i.accuracy},
          {"loss", i.loss},           {"evaluated", i.evaluated}, {"reached_target", i.reached_target}};
}

int episode(const std::string& config_path, std::int64_t index, std::uint64_t seed, const std::string& moves) {
  const experiments::TrainConfig config = experiments::load_train_config(config_path);
  const auto env = experiments::make_training_env(config, index);
  nlohmann::json out;
  const orchestra::ResetResult reset = env->reset(seed);
  out["reset"] = {{"observation", reset.observation}, {"info", info_json(reset.info)}};
  out["steps"] = nlohmann::json::array();
  std::stringstream list(moves);
  for (std::string move; std::getline(list, move, ',');) {
    const orchestra::StepResult step = env->step(std::stoi(move));
    out["steps"].push_back({{"observation", step.observation},
                            {"reward", step.reward},
                            {"terminated", step.terminated},
                            {"truncated", step.truncated},
                            {"info", info_json(step.info)}});
    if (step.terminated || step.truncated) break;
  }
  std::cout << out.dump() << "\n";
  return 0;
}

int greedy(const std::string& policy_path, int count, std::uint64_t seed) {
  agents::GreedyBarrierAgent agent(agents::A3cPolicy::load(policy_path));
  const orchestra::StateBounds bounds = orchestra::state_bounds();
  std::mt19937_64 rng(seed);
  nlohmann::json out;
  for (int k = 0; k < count; ++k) {
    std::vector<float> observation(bounds.low.size());
    for (std::size_t i = 0; i < observation.size(); ++i)
      observation[i] = std::uniform_real_distribution<float>(bounds.low[i], bounds.high[i])(rng);
    out["observations"].push_back(observation);
    out["moves"].push_back(agent.act(observation));
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    env::set_compute_threads(1);
    if (args.size() == 5 && args[0] == "episode") return episode(args[1], std::stoll(args[2]), std::stoull(args[3]), args[4]);
    if (args.size() == 4 && args[0] == "greedy") return greedy(args[1], std::stoi(args[2]), std::stoull(args[3]));
    std::cerr << "usage: env_probe episode TRAIN_CONFIG INDEX SEED MOVES | env_probe greedy POLICY COUNT SEED\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "env_probe: " << e.what() << "\n";
    return 1;
  }
}
