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
//   to the Barrier Controller for tuning"); tau_n still follows the re-estimated t_b^n.
// - "fixed-t" (BarrierSource::Fixed): a given T for ablations; tau_n and the shares still adapt.
//   With BarrierSource::CommMultiple, T = a given multiple of the all-reduce time C at start (the
//   cost model's, ClusterView::allreduce_ms), at least the fastest batch time: the rule of thumb
//   "compute about as long as you communicate", a static baseline that needs no sweep.
//
// Decisions (3.1.3: "The agent will try to adjust this value at the beginning of each epoch"): with
// `interval: epoch` (the paper, the default) an attached agent moves T at the first round of every
// epoch; with `interval_rounds: K` at the first round of every epoch and every round whose global
// index is a multiple of K, and t_b^n and C are then also re-estimated from each window of rounds,
// so a worker that slows down mid-epoch shows in tau_n and in the state within K rounds.
//
// Actions (3.1.3, "Action Space"): +1 / -1 / 0. Additive (the paper's): T moves by one unit, by
// default the fastest worker's probed batch time, so +1 is one more local step for the fastest
// worker whatever the model's speed (docs/ARCHITECTURE.md "Reading the papers"). Multiplicative: T
// is multiplied or divided by `factor`, so the few decisions of an episode can cross the barrier's
// whole range (one unit per epoch moves T by at most 8 units in an 8-epoch episode). T stays within
// [min_T, max_T], by default [min_n t_b^n, max_local_steps * max_n t_b^n] as probed at the start
// (and, if given, within factors of the starting T):
// below the fastest batch time every tau is already 1, above the upper end every tau is capped, so
// moves past them change nothing. (Between max_local_steps * min_n t_b^n and the upper end the
// fastest workers are capped and wait, but the slower ones still take more steps per average,
// which pays on a cluster whose all-reduce dwarfs its steps.)
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
  CommMultiple,  // "fixed-t" with T_x_comm: comm_multiple times C at start
};

// When an attached agent decides, and how often t_b^n and C are re-estimated (see above).
enum class DecisionInterval { Epoch, Rounds };
// What an action does to T (see above).
enum class BarrierMove { Additive, Multiplicative };

struct BarrierControllerOptions {
  BarrierSource source = BarrierSource::Lcm;
  double fixed_barrier_ms = 0;   // T for BarrierSource::Fixed (> 0); ignored otherwise
  double comm_multiple = 0;      // T / C for BarrierSource::CommMultiple (> 0); ignored otherwise
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
  // the measured comm_ms of the rounds the whole cluster took part in after every epoch (window):
  // an epoch's tail, averaged among the workers that still hold data, does not count.
  LcmObjective lcm_objective = LcmObjective::Idle;
  double action_unit_ms = 0;     // Additive: ms per action step; 0: the fastest worker's probed batch time
  BarrierMove move = BarrierMove::Additive;
  double move_factor = 2.0;      // Multiplicative: T *= factor^action (> 1)
  // Actions are -max_move ... +max_move (1 .. kMaxBarrierMove): 1 is the paper's +1 / 0 / -1; 2
  // with factor 2 moves T by x2 or x4 either way (issue 41: x2 moves are too slow to leave T* on a
  // cluster whose all-reduce takes seconds, x4 moves too coarse where the best T is near T*).
  int max_move = 1;
  DecisionInterval interval = DecisionInterval::Epoch;
  int interval_rounds = 1;       // Rounds: K
  double min_barrier_ms = 0;     // bounds on T; 0: the defaults above
  double max_barrier_ms = 0;
  // Bounds relative to the starting T (LCM's T*): T within [min_x, max_x] times it as well (0: not
  // used). A learned controller trained over many clusters is kept near the region where the
  // heuristic's T* is informative: an episode that wanders to T = the fastest step (DSGD's
  // hundreds of rounds per epoch) teaches nothing a bound would not.
  double min_barrier_x_start = 0;
  double max_barrier_x_start = 0;
  // A cap, in steps, on that floor (issue 41): min_barrier_x_start * T* is lowered to at most this
  // many of the slowest worker's probed batch times (0: no cap). Where T* is many steps (equal
  // workers on a fast network, where LCM's utilization rule runs to the 64-step cap) the best T
  // can be a few steps, far below T*/8; where T* is a few steps the cap is above the floor and
  // changes nothing.
  double floor_cap_steps = 0;
  // A floor in steps (issue 41): T at least this many of the slowest worker's probed batch times
  // (0: none), applied after every other floor. Below one slowest step a shorter T shortens no
  // round (the slowest worker still takes its one step, tau = max(1, floor(T / t_b))); the faster
  // workers take fewer steps per average, which lowers their drift but not the round's cost. The
  // static sweep starts at that step. Measured on the shipped x4 network, which moves from a T* of
  // two slowest steps to T*/4: 0.99x its time over 48 drawn clusters, within noise: the shorter
  // T's lower drift is worth about what its smaller rounds lose (BENCHMARKS.md, "A floor at the
  // slowest worker's step").
  double min_barrier_steps = 0;
  bool rerun_lcm_each_epoch = true;  // Lcm only: re-run the heuristic on measured times (see above)
  // Lcm only: T is this multiple of the heuristic's T*, at the start and at every re-run (1: T* as
  // the paper). With an attached agent it moves the anchor: start_barrier_ms() and the bounds
  // relative to the start follow it, so the network reads the scaled T* as its start (issue 41:
  // the learned controllers end below the oracle's T on communication-bound clusters). Like T*,
  // the scaled start is not clamped; the bounds act on moves.
  double lcm_multiple = 1;
  // Lcm only: T* at most max(lcm_cap_steps slowest-worker steps, lcm_cap_x_comm C), at the start
  // and at every re-run, before lcm_multiple (0 and 0: no cap, the default). Issue 41: where the
  // workers are equal every T aligns them, so the Utilization rule's (t_W + C) / (T + C) falls
  // with T all the way to the 64-step cap, 13-35 times the best static T of the sixth held-out
  // suite (3.3-4.4 slowest steps there where C is short, 0.3-2 C where it is long). Over the
  // suites measured since, that best T ranges from 1.8 to 9.7 steps, so no one cap fits every
  // cluster (BENCHMARKS.md, "An anchor at most four steps or half the all-reduce"). With an
  // attached agent the capped T* is the anchor: start_barrier_ms() and the relative bounds follow it.
  double lcm_cap_steps = 0;
  double lcm_cap_x_comm = 0;
  // The cap above acts only where T* is at least this many slowest-worker steps (0: everywhere).
  // Measured (BENCHMARKS.md, "An anchor at most four steps or half the all-reduce"): the cap
  // helps where T* ran to 17-63 steps (equal or near-equal workers) and costs 6% where a
  // heterogeneous cluster's T* of 6-8 steps is what the network was trained to start from.
  double lcm_cap_above_steps = 0;
  // Decision windows of whole-cluster rounds only (issue 41): a round some workers sat out (their
  // epoch's shard used up while capped faster workers still hold data, an epoch's tail) neither
  // enters the state's window nor closes it, and the agent is not asked after one; the epoch's
  // end still closes the window. Off: every round counts (every policy trained before 2026-11-27).
  bool whole_cluster_windows = false;
  DataPartition partition = DataPartition::Speed;
  int probe_repetitions = 5;     // probes per worker at start(); their median is t_b^n
  // The model average's weights: Uniform, 1/N over the workers that took part in the round (the
  // default), or AllWorkers, Eq. 2 with N fixed (env/round_plan.hpp).
  env::AverageWeighting weighting = env::AverageWeighting::Uniform;
  // Once a test evaluation reaches this accuracy an attached agent is no longer asked: T stays where
  // it is (0: never). A learned controller's training episodes end at the target accuracy
  // (local_sgd_barrier_env.hpp), so its moves past it were never trained; holding, T after the
  // target is the T that reached it (`orchestra-a3c`'s `after_target: hold`, the default).
  double hold_at_accuracy = 0;
  int horizon_epochs = 0;        // episode length for the RL state's progress entry; 0 unknown
  // The RL state's entries (rl_state.hpp): Base, Progress or Lead (and how the loss did at the
  // current T against the T before it). A policy is deployed with the features it was trained on.
  StateFeatures state_features = StateFeatures::Base;

  static BarrierControllerOptions orchestra_lcm() { return {}; }
  static BarrierControllerOptions fixed_t(double barrier_ms);
  static BarrierControllerOptions fixed_t_x_comm(double comm_multiple);
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
  // With hold_at_accuracy > 0: an evaluation at or above it stops the agent's moves (holding()).
  void observe_evaluation(const env::EvalResult& result) override;
  bool holding() const { return holding_; }

  // Moves T by one action (in [-max_move, +max_move]; anything else throws std::invalid_argument):
  // by `action` units, or by factor^action, within the bounds. Throws std::logic_error before start(). From then on
  // the heuristic no longer sets T.
  void move_barrier(int action);
  // Sets T (clamped to the bounds) without a decision: the RL environment's exploring starts.
  // start_barrier_ms() stays LCM's T*. Throws std::logic_error before start().
  void place_barrier(double barrier_ms);
  // True when the round about to run starts a decision window (an attached agent is asked then).
  bool decision_point(const env::PlanContext& context) const;
  // True when the round just reported closes a decision window (the next one is a decision point).
  bool closes_window(const env::RoundReport& report) const;
  // The learned controller consulted at every epoch start (nullptr detaches). While one is attached
  // the heuristic no longer sets T.
  void set_agent(std::shared_ptr<BarrierAgent> agent) { agent_ = std::move(agent); }
  // The RL state (rl_state.hpp) after the latest closed window, with the current T and tau.
  std::vector<float> observation() const;

  double barrier_ms() const { return barrier_ms_; }
  double comm_ms() const { return comm_ms_; }  // C used by the heuristic: the all-reduce per round
  double action_unit_ms() const { return unit_ms_; }
  double start_barrier_ms() const { return start_barrier_ms_; }  // T at start(): LCM's T* or the fixed T
  double min_barrier_ms() const { return min_barrier_ms_; }
  double max_barrier_ms() const { return max_barrier_ms_; }
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
  void close_window();
  void extend_stretch(const env::RoundReport& report);

  // Compute time and steps per worker over full-batch rounds (observe_round says which count).
  struct StepTimes {
    std::vector<double> compute_ms;
    std::vector<std::int64_t> steps;
    void reset(std::size_t workers);
    // t_b^n = compute / steps where something was measured; the others keep `estimate`.
    void apply(std::vector<double>& estimate) const;
  };

  BarrierControllerOptions options_;
  bool started_ = false;
  int num_workers_ = 0;
  std::vector<int> batch_sizes_;
  std::vector<double> batch_ms_;
  std::optional<DataPartitionController> partition_;
  std::vector<double> shares_;
  LcmResult lcm_;
  double barrier_ms_ = 0;
  double start_barrier_ms_ = 0;
  double min_barrier_ms_ = 0, max_barrier_ms_ = 0;
  double unit_ms_ = 0;
  double comm_ms_ = 0;
  std::vector<int> local_steps_;
  bool moved_ = false;
  std::shared_ptr<BarrierAgent> agent_;

  std::int64_t train_samples_ = 0;
  std::vector<double> start_batch_ms_;  // t_b^n as probed at start()
  int last_action_ = 0;
  bool last_round_partial_ = false;  // the latest round had a worker with no local step
  bool holding_ = false;  // hold_at_accuracy reached: the agent is not asked again this run

  // This epoch's and this window's measurements, and what the state keeps of the closed windows.
  StepTimes epoch_times_, window_times_;
  double window_comm_ms_ = 0, epoch_comm_ms_ = 0;
  std::int64_t window_rounds_ = 0, epoch_rounds_ = 0;
  std::int64_t epoch_samples_ = 0;
  DecisionWindow window_;
  std::optional<DecisionWindow> last_window_, previous_window_;
  // The run's clock (the rounds' round_ms summed) and the rounds at the current T and at the one
  // before it: StateFeatures::Progress and Lead.
  double clock_ms_ = 0;
  std::optional<ProgressStretch> stretch_, previous_stretch_;
  double first_loss_ = 0;
  double accuracy_before_last_ = 0;
  double last_accuracy_ = 0;
  int epochs_done_ = 0;
};

}  // namespace orchestra
