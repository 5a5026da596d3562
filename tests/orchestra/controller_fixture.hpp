// Fixtures shared by the barrier controller's tests: a small cluster view and an agent that
// always returns one action.
#pragma once

#include <vector>

#include "env/barrier_policy.hpp"
#include "orchestra/barrier_agent.hpp"

namespace testing {

// Four workers, a 10 ms one and three at 21 ms, whose all-reduce the cost model puts at 5 ms.
inline env::ClusterView two_speed_cluster() {
  env::ClusterView view;
  view.num_workers = 4;
  view.global_batch = 256;
  view.train_samples = 60000;
  view.max_batch = {512, 512, 512, 512};
  view.probe_step_ms = [](int worker, int) { return worker == 0 ? 10.0 : 21.0; };
  view.allreduce_ms = [](int participants) { return participants == 4 ? 5.0 : -1.0; };
  return view;
}

// Returns `action` at every decision and remembers the observation it was shown.
struct ScriptedAgent : orchestra::BarrierAgent {
  int action = 1;
  int calls = 0;
  std::vector<float> last_observation;
  int act(const std::vector<float>& observation) override {
    ++calls;
    last_observation = observation;
    return action;
  }
};

}  // namespace testing
