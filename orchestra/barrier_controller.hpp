// Orchestra's barrier policy: owns the synchronization barrier T (ms) and turns it into per-worker
// local steps tau_n = max(1, floor(T / t_b^n)) followed by a model average with weight 1/N (Eq. 2),
// with each worker's share of the data set by the Data Partition Controller (3.1.2).
//
// Two policies share this class:
// - "orchestra-lcm" (BarrierSource::Lcm): T starts at the LCM heuristic's T* (3.1.1) computed from
//   probed batch times. After each epoch the batch times are re-estimated from the rounds' measured
//   compute_ms / local_steps and, while nobody else owns T, the heuristic is re-run on them: 3.1.1
//   adjusts the batch numbers "dynamically according to its current performance ... applied to the
//   training of the next epoch". Once a learned controller moves T (an attached BarrierAgent, or any
//   call to move_barrier), T is its own and the heuristic only gave the start (3.1.3: "We obtain the
//   preliminary synchronization barrier through the Load Balancing Controller, and finally, input it
//   to the Barrier Controller for tuning"); tau_n still follows the re-estimated t_b^n every epoch.
// - "fixed-t" (BarrierSource::Fixed): a given T for ablations; tau_n and the shares still adapt.
//
// Actions (3.1.3, "Action Space"): +1 / -1 / 0 move T by one unit. The default unit is the fastest
// worker's probed batch time, fixed for the run, so +1 is one more local step for the fastest worker
// whatever the model's speed ("by +1" in the paper, read in steps: docs/ARCHITECTURE.md "Reading the papers"). T is kept within
// [min_n t_b^n, max_local_steps * min_n t_b^n]: below the fastest batch time every tau is already 1,
// above the upper end the fastest worker's tau is already capped, so moves past them change nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/barrier_policy.hpp"
#include "orchestra/barrier_agent.hpp"
#include "orchestra/data_partition.hpp"
#include "orchestra/lcm_heuristic.hpp"
#include "orchestra/rl_state.hpp"

namespace orchestra {

// How an epoch's data is shared out: in proportion to speed (Orchestra 3.1.2), or left to the
// environment's B_i * tau_i split (empty data_shares).
enum class DataPartition { Speed, Steps };

enum class BarrierSource {
  Lcm,    // "orchestra-lcm": T* of the LCM heuristic (3.1.1)
  Fixed,  // "fixed-t": fixed_barrier_ms
};

struct BarrierControllerOptions {
  BarrierSource source = BarrierSource::Lcm;
  double fixed_barrier_ms = 0;   // T for BarrierSource::Fixed (> 0); ignored otherwise
  // B_n per worker; empty: global_batch / N (at least 1), capped by each worker's max_batch.
  std::vector<int> batch_sizes;
  // M of 3.1.1. 8 lets the paper's 2080 Ti / T4 pair (2.1x apart) reach about 16 local steps on the
  // fast GPU, the upper end of the local-step counts used in local-SGD studies (H = 1..16); a larger
  // spread leaves the slow workers' models further behind at each average.
  int max_step_spread = 8;
  int max_local_steps = 64;      // cap on every tau_n (and on the heuristic's search), see LcmOptions
  // What T* minimizes (lcm_heuristic.hpp): Idle, 3.1.1's t_W read literally (this struct's default,
  // the paper's rule), or Utilization, the least busy worker's non-computing share of a round with
  // the all-reduce time C counted (the default of the orchestra-lcm policy in experiment configs,
  // experiments/registry/orchestra_options.hpp). C comes from ClusterView::allreduce_ms at start() and from
  // the measured rounds' comm_ms after every epoch.
  LcmObjective lcm_objective = LcmObjective::Idle;
  double action_unit_ms = 0;     // ms per action step; 0: the fastest worker's probed batch time
  bool rerun_lcm_each_epoch = true;  // Lcm only: re-run the heuristic on measured times (see above)
  DataPartition partition = DataPartition::Speed;
  int probe_repetitions = 5;     // probes per worker at start(); their median is t_b^n
  int horizon_epochs = 0;        // episode length for the RL state's progress entry; 0 unknown

  static BarrierControllerOptions orchestra_lcm() { return {}; }
  static BarrierControllerOptions fixed_t(double barrier_ms);
};

class BarrierController final : public env::BarrierPolicy {
 public:
  // Throws std::invalid_argument for options out of range (messages name the field).
  explicit BarrierController(BarrierControllerOptions options = {});

  // Probes every worker's batch time (ClusterView::probe_step_ms, median of probe_repetitions),
  // computes T and the first shares. Starts a new episode: forgets earlier moves and measurements.
  void start(const env::ClusterView& cluster) override;
  // ModelAverage with 1/N weights (Eq. 2), {B_n, tau_n} per worker, the shares and T. At the first
  // round of an epoch an attached agent is asked for an action first.
  env::RoundPlan plan(const env::PlanContext& context) override;
  // Accumulates the rounds' compute time per full-batch step (a round whose samples fall short of
  // local_steps * B_n held a partial last batch and would bias t_b^n low, so it is skipped).
  void observe_round(const env::RoundReport& report) override;
  // Re-estimates t_b^n (workers without a measurement keep the previous value), updates the data
  // partition from worker_steps / worker_busy_ms, re-runs the heuristic if it owns T, updates tau.
  void observe_epoch(const env::EpochReport& report) override;

  // Moves T by action * unit (action in {-1, 0, +1}; anything else throws std::invalid_argument).
  // Throws std::logic_error before start(). From then on the heuristic no longer sets T.
  void move_barrier(int action);
  // The learned controller consulted at every epoch start (nullptr detaches). While one is attached
  // the heuristic no longer sets T.
  void set_agent(std::shared_ptr<BarrierAgent> agent) { agent_ = std::move(agent); }
  // The RL state (rl_state.hpp) after the latest finished epoch, with the current T and tau.
  std::vector<float> observation() const;

  std::string name() const;  // "orchestra-lcm" or "fixed-t"
  double barrier_ms() const { return barrier_ms_; }
  double comm_ms() const { return comm_ms_; }  // C used by the heuristic: the all-reduce per round
  double action_unit_ms() const { return unit_ms_; }
  const std::vector<int>& local_steps() const { return local_steps_; }
  const std::vector<double>& data_shares() const { return shares_; }  // sum to 1
  const std::vector<double>& batch_times_ms() const { return batch_ms_; }  // current t_b^n
  const std::vector<int>& batch_sizes() const { return batch_sizes_; }
  const LcmResult& lcm() const { return lcm_; }  // the latest run of the heuristic
  bool lcm_owns_barrier() const;
  const BarrierControllerOptions& options() const { return options_; }

 private:
  void require_started(const char* what) const;
  void run_lcm();
  void update_local_steps();

  BarrierControllerOptions options_;
  bool started_ = false;
  int num_workers_ = 0;
  std::vector<int> batch_sizes_;
  std::vector<double> batch_ms_;
  std::optional<DataPartitionController> partition_;
  std::vector<double> shares_;
  LcmResult lcm_;
  double barrier_ms_ = 0;
  double unit_ms_ = 0;
  double comm_ms_ = 0;
  std::vector<int> local_steps_;
  bool moved_ = false;
  std::shared_ptr<BarrierAgent> agent_;

  // This epoch's measurements, and what the state keeps of the last finished epoch.
  std::vector<double> epoch_compute_ms_;
  std::vector<std::int64_t> epoch_steps_;
  RoundSummary epoch_rounds_;
  std::optional<env::EpochReport> last_epoch_;
  RoundSummary last_rounds_;
  double accuracy_before_last_ = 0;
  double last_accuracy_ = 0;
  int epochs_done_ = 0;
};

}  // namespace orchestra
