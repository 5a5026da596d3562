// Prints, as JSON, what C++ computes from a policy file: pi(.|s) for a fixed set of observations
// and the greedy action. check_policy_file.py compares it with what Python computes from the same
// file after torch.load and load_state_dict into the equivalent nn.Module.
#include <cstdio>
#include <iostream>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/policy_file.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: policy_probe POLICY.pt\n";
    return 2;
  }
  try {
    agents::A3cPolicy policy = agents::A3cPolicy::load(argv[1]);
    // Observations of the scale the state takes (orchestra/rl_state.hpp: ratios and logs near 0..2).
    std::mt19937_64 rng(20261123);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    nlohmann::json out;
    out["updates"] = policy.updates();
    for (int k = 0; k < 16; ++k) {
      std::vector<float> observation(static_cast<std::size_t>(policy.observation_size()));
      for (auto& x : observation) x = value(rng);
      out["observations"].push_back(observation);
      out["probabilities"].push_back(policy.probabilities(observation));
      out["greedy_actions"].push_back(policy.predict(observation));
    }
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "policy_probe: " << e.what() << "\n";
    return 1;
  }
}
