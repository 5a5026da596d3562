// Rank 0's side of one policy's real run: it asks the policy for each round's plan, broadcasts it,
// runs its own share like every other rank, gathers the ranks' measured times into the same
// RoundReport and EpochReport the simulator produces, evaluates, and records. The other ranks run
// follow_policy, which obeys the control messages until EndPolicy.
#pragma once

#include <functional>
#include <optional>

#include "env/barrier_policy.hpp"
#include "env/communicator.hpp"
#include "env/real_worker.hpp"
#include "experiments/config.hpp"
#include "experiments/policy_run.hpp"
#include "experiments/progress.hpp"
#include "experiments/real_checkpoint.hpp"

namespace experiments {

// Called after every finished epoch with everything needed to write the results and a checkpoint.
using EpochCallback = std::function<void(const RealCheckpoint&)>;

// The clock of a real run is wall time spent training: profiling included, evaluation and result
// writing excluded (the simulator charges them nothing either), so time-to-accuracy compares.
// A failure of rank 0's own (a plan error, a results file it cannot write) is sent to the other
// ranks as Abort before it is rethrown, so they stop with that message instead of timing out.
PolicyOutcome lead_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy,
                          env::RealWorker& worker, env::Communicator& comm, const env::Dataset& test, Progress& progress,
                          const std::optional<RealCheckpoint>& resume, const EpochCallback& after_epoch);

// Every rank but 0: runs rounds and probes as told until EndPolicy; throws std::runtime_error with
// rank 0's message on Abort.
void follow_policy(env::RealWorker& worker, env::Communicator& comm);

}  // namespace experiments
