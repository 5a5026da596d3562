#include "experiments/registry/a3c_policy.hpp"

#include "common/limits.hpp"

#include <filesystem>
#include <limits>

#include "agents/greedy_barrier_agent.hpp"
#include "experiments/registry/orchestra_options.hpp"
#include "orchestra/barrier_controller.hpp"
#include "orchestra/rl_state.hpp"

namespace experiments {

std::unique_ptr<env::BarrierPolicy> make_a3c_policy(common::YamlReader& r, const ExperimentConfig& config) {
  if (!r.has("policy")) r.fail("policy", "required key is missing (the policy.pt written by orchestra train)");
  std::string path = r.text("policy", "");
  if (!std::filesystem::exists(path) && !std::filesystem::path(path).is_absolute()) {
    const auto beside = std::filesystem::path(config.file).parent_path() / path;
    if (std::filesystem::exists(beside)) path = beside.string();
  }
  std::optional<agents::A3cPolicy> policy;
  try {
    policy.emplace(agents::A3cPolicy::load(path));
  } catch (const std::runtime_error& e) {
    r.fail("policy", e.what());
  }
  if (policy->observation_size() != orchestra::StateLayout::kStateSize)
    r.fail("policy", path + " was trained on observations of " + std::to_string(policy->observation_size()) +
                         " entries; the barrier controller's state has " +
                         std::to_string(orchestra::StateLayout::kStateSize) + " (was it trained on the toy environment?)");
  const bool unit_given = r.has("unit_ms");
  orchestra::BarrierControllerOptions options = read_barrier_options(r, orchestra::BarrierSource::Lcm, config);
  // The network learned its moves in the training unit; a config that names another one wins.
  if (!unit_given) options.action_unit_ms = policy->action_unit_ms();
  r.resolved()["unit_ms"] = options.action_unit_ms;
  auto controller = std::make_unique<orchestra::BarrierController>(options);
  controller->set_agent(std::make_shared<agents::GreedyBarrierAgent>(std::move(*policy)));
  return controller;
}

}  // namespace experiments

namespace experiments {

std::unique_ptr<env::BarrierPolicy> make_random_barrier_policy(common::YamlReader& r, const ExperimentConfig& config) {
  const auto seed = static_cast<std::uint64_t>(r.integer("seed", static_cast<std::int64_t>(config.seed), 0, common::kMaxSeed));
  auto controller = std::make_unique<orchestra::BarrierController>(
      read_barrier_options(r, orchestra::BarrierSource::Lcm, config));
  controller->set_agent(std::make_shared<agents::RandomBarrierAgent>(seed));
  return controller;
}

}  // namespace experiments
