// The simulated cluster with the surrogate of training in place of libtorch: env::Simulation (the
// exact timing simulation, unchanged) drives TrainingHooks answered by the fitted model
// (surrogate_model.hpp), so one round costs microseconds instead of real forward and backward
// passes. A RoundCluster like LocalSgdEnv: `orchestra run` with `runtime.training: surrogate`, and
// the RL environment with `environment: surrogate`, run on it unchanged.
//
// What it keeps: one ReplicaState per worker (its progress, noise and drift since the last average
// it received) and the global model's state with its noise draws. Each local step reports a
// training loss drawn at the replica's state before the step (the loss a forward pass sees); an
// average whose receivers are all workers sets the global model, which evaluate() then reports
// (the same answer until the next such average, as a real evaluation of an unchanged model is).
// A gradient all-reduce round (DSGD, LBB) is modelled as one local step of every member at its
// batch followed by an average weighted by B_i / B, which it is for plain SGD (the replicas' local
// momentum aside); MLLSGD's server averages are averages of their members, after which the
// server's replicas are treated as independent again at the global average (their shared noise is
// then under-counted). FedNova's normalized averaging and an outer optimizer are not modelled: a
// plan that asks for them throws common::PlanError.
//
// Determinism: every draw comes from one generator seeded by the episode's seed (and the
// simulation's own, derived from the same seed), so the same seed gives the same episode.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "env/round_cluster.hpp"
#include "env/sim/simulation.hpp"
#include "env/surrogate/surrogate_model.hpp"

namespace env {

struct SurrogateEnvSpec {
  // train_samples 0: the surrogate task's; message_bytes 0: its model's parameters in float32.
  SimulationSpec simulation;
  bool cosine_lr = false;   // lr_e = lr (1 + cos(pi e / planned_epochs)) / 2 at each epoch start
  int planned_epochs = 1;
};

class SurrogateEnv : public RoundCluster, private TrainingHooks {
 public:
  // Throws std::invalid_argument for a null model.
  SurrogateEnv(SurrogateEnvSpec spec, std::shared_ptr<const SurrogateModel> model, std::uint64_t seed);

  ClockKind clock_kind() const override { return ClockKind::Simulated; }
  ClusterView view() override { return simulation_->view(); }
  RoundReport run_round(const RoundPlan& plan) override;
  bool in_epoch() const override { return simulation_->in_epoch(); }
  EpochReport finish_epoch() override;
  EvalResult evaluate() override { return {global_.accuracy, global_.loss}; }

  double clock_ms() const override { return simulation_->clock_ms(); }
  int epoch() const override { return simulation_->epoch(); }
  std::int64_t rounds() const override { return simulation_->rounds(); }
  double epoch_progress() const override { return simulation_->epoch_progress(); }
  double message_bytes() const { return simulation_->spec().message_bytes; }
  const SurrogateModel& model() const { return *model_; }
  const std::vector<ReplicaState>& replicas() const { return replicas_; }

 private:
  void begin_epoch(int epoch) override;
  double gradient_round(const std::vector<IndexSpan>& batches) override;
  std::vector<double> local_steps(const std::vector<std::vector<IndexSpan>>& batches) override;
  void average(const AverageGroup& group, const std::vector<int>& receivers) override;
  double local_step(int worker, double batch);  // one step; returns its training loss

  SurrogateEnvSpec spec_;
  std::shared_ptr<const SurrogateModel> model_;
  SurrogateDynamics dynamics_;
  SurrogateRng rng_;
  std::vector<ReplicaState> replicas_;
  GlobalState global_;
  double lr_factor_ = 1.0;
  std::vector<const ReplicaState*> member_states_;  // scratch for average()
  std::unique_ptr<Simulation> simulation_;
};

}  // namespace env
