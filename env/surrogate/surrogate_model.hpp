// The surrogate of training: a fitted model of how one workload's global model moves in a round of
// local SGD, given what the round did (each replica's local steps and batch sizes, who is averaged
// with which weights, the learning rate), with its noise. Plain C++, a few hundred flops per round:
// the RL environment (SurrogateEnv) runs the exact timing simulation with this in place of libtorch.
//
// Two forms, fitted to the same logged rounds (experiments/surrogate/) and chosen on held-out
// episodes (BENCHMARKS.md, "The surrogate of training"):
//
// ProgressNoise: a model's test loss is L = F(p) + v, a deterministic part F of its progress p and
//   an excess v from SGD noise (the classic split of E[L] into the loss at the mean iterate and
//   the iterates' spread, e.g. Mandt et al. 2017), with
//     F(p) = L_inf + (L_0 - L_inf) (1 + p / p_0)^-alpha                        (the learning curve)
//   A local step of a replica at batch b and learning-rate factor lambda (lr / the task's lr):
//     p += lambda (b / b_ref)^beta                                              (progress)
//     v -> a v + (1 - a) s(b),  a = exp(-rho lambda),  s(b) = s_0 lambda (b_ref / b)^gamma
//       (the noise relaxes towards the stationary level of SGD at temperature lr / b)
//     d += lambda (b_ref / b)^delta                                             (drift since the last average)
//   An average of members i with weights w_i (sum 1), each with progress gain g_i, drift d_i, the
//   noise it inherited at its last average u_i decayed by a_i and the fresh noise xi_i since:
//     p' = sum_i w_i (p_base_i + e g_i),   e = (1 + sum_i w_i d_i / d_0)^-kappa
//       (replicas that drifted far apart average to less than their mean progress: local SGD's
//        penalty for long periods, Lin et al. 2020, "Don't use large mini-batches, use local SGD")
//     v' = (sum_i w_i sqrt(a_i u_i))^2 + z [sum_i w_i^2 xi_i + (1 - sum_i w_i^2) (c sum_i w_i xi_i + q r / (1 + r))],
//       r = (sum_i w_i d_i / d_q)^eta
//       (independent noise shrinks by sum w^2 when averaged, but a share c of it does not come
//        back, and replicas that drifted far apart average to a worse model, up to q: the loss
//        barrier between diverged networks; z is log-normal with mean 1 and sd `fresh_sd`, the
//        round's own noise)
//   That barrier P = z (1 - sum w^2) q r / (1 + r) is shed at its own rate: P -> exp(-k rho lambda) P
//   a step, k = `penalty_speedup` (k = 1: as the rest of v). In real training a few local steps
//   from the average of replicas that drifted far apart recover most of it: on drawn-5009 at
//   T = 1.2 s the ~7 steps each of the 2-3 workers left at an epoch's end take the test loss from
//   0.96 to 0.78 (BENCHMARKS, "The surrogate's tilt").
// SampleClock: no noise state; progress as above (the same efficiency e), and the loss
//   L = F(p) exp(u), u an AR(1) process over rounds (sd `fresh_sd`, correlation `observation_correlation`).
//
// Both: the test accuracy is a polynomial in ln L (fitted on the logged evaluations) plus an AR(1)
// residual over evaluations, plus zeta max(0, ln(1 + s) - ln(1 + s_ref)), s the averaged members'
// mean local steps in the round that made the model (`accuracy.steps_gain`, 0 in a plain fit; set
// by `orchestra surrogate calibrate --steps-gains`): an average of replicas that took many local
// steps classifies better than its loss says, and one of few steps does not (real sweeps: +0.7 to
// +1.5 points at 13-30 steps a round over the map of the same cluster's rounds of 2-8 steps, about
// 0 below 8, hence a hinge at s_ref = 8; BENCHMARKS "The surrogate's tilt"); a step's training loss
// is the replica's L times exp(gap + noise of sd `step_sd`); each episode's curve is scaled once by
// exp(o - episode_sd^2 / 2), o ~ N(0, episode_sd^2), whose mean is 1 (runs of one workload differ
// by seed; the fitted curve is the mean run's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/surrogate/surrogate_task.hpp"

namespace env {

enum class SurrogateForm { ProgressNoise, SampleClock };

const char* surrogate_form_name(SurrogateForm form);  // "progress-noise" | "sample-clock"

// F(p) = floor + (initial - floor) (1 + p / scale)^-exponent.
struct LossCurve {
  double initial = 2.3;
  double floor = 0.3;
  double scale = 10.0;
  double exponent = 1.0;
  double at(double progress) const;
};

struct ProgressParams {
  double reference_batch = 64;        // b_ref
  double batch_exponent = 0;          // beta
  double drift_scale = 100;           // d_0
  double drift_exponent = 0;          // kappa (0: no penalty)
  double drift_batch_exponent = 0;    // delta
};

struct NoiseParams {
  double relaxation = 0.1;            // rho, per step at the task's lr
  double level = 0;                   // s_0 (0: no noise state)
  double batch_exponent = 1;          // gamma
  double unrecovered = 0;             // c, in [0, 1]
  double divergence = 0;              // q (0: none)
  double divergence_scale = 100;      // d_q
  double divergence_exponent = 1;     // eta
  double fresh_sd = 0;                // sd of ln z (ProgressNoise) or of u (SampleClock)
  double observation_correlation = 0; // SampleClock: u's correlation from one round to the next
  double episode_sd = 0;              // sd of the episode's ln-scale o
  double penalty_speedup = 1;         // k: the barrier P is shed at k rho (1: as the rest of v)
};

// accuracy = sum_k coefficients[k] (ln L)^k + steps_gain max(0, ln(1 + s) - ln(1 + steps_reference)),
// ln L clamped to [log_loss_min, log_loss_max] (the fitted range), plus the residual:
// r' = correlation r + sqrt(1 - correlation^2) residual_sd eps.
struct AccuracyMap {
  std::vector<double> coefficients;
  double log_loss_min = -2;
  double log_loss_max = 1;
  double residual_sd = 0;
  double residual_correlation = 0;
  double steps_gain = 0;        // zeta, per ln(1 + the model's round steps)
  double steps_reference = 8;   // the round steps up to which the polynomial holds as fitted
  // The mean accuracy, in [0, 1], of a model at `loss` averaged from replicas that took
  // `round_steps` local steps each on average.
  double at(double loss, double round_steps = 0) const;
};

struct TrainLossParams {
  double log_gap = 0;   // ln(training loss / the replica's test loss), on average
  double step_sd = 0;   // sd of one step's ln training loss around that
};

struct SurrogateModel {
  SurrogateForm form = SurrogateForm::ProgressNoise;
  SurrogateTask task;
  LossCurve curve;
  ProgressParams progress;
  NoiseParams noise;
  AccuracyMap accuracy;
  TrainLossParams train_loss;
};

// Throws std::invalid_argument naming the first parameter out of its range (non-finite numbers,
// a negative scale, c outside [0, 1], no accuracy coefficients, ...).
void validate(const SurrogateModel& model);

// One model's state as the surrogate sees it: a replica during its local steps, or the global model.
struct ReplicaState {
  double progress = 0;       // p
  double base_progress = 0;  // p at the last average this replica received
  double inherited = 0;      // u: its noise at that average (the barrier P apart)
  double decay = 1;          // a_i: how much of u is left
  double penalty = 0;        // P: the barrier between the replicas that average gave
  double penalty_decay = 1;  // how much of P is left
  double fresh = 0;          // xi_i: noise gathered since
  double drift = 0;          // d_i
  std::int64_t steps = 0;    // local steps since that average
  double round_steps = 0;    // the members' weighted mean local steps in the average that made it
  double noise() const { return inherited * decay + penalty * penalty_decay + fresh; }
};

// A deterministic generator (splitmix64 seeding xoshiro256**, Box-Muller normals), so that the same
// seed gives the same episode on every platform and standard library.
class SurrogateRng {
 public:
  explicit SurrogateRng(std::uint64_t seed = 1);
  std::uint64_t next();
  double uniform();  // in (0, 1)
  double normal();   // standard normal

 private:
  std::uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

// The global model's state and the episode's draws: what evaluate() reports.
struct GlobalState {
  ReplicaState model;
  double episode_scale = 1;     // exp(o - episode_sd^2 / 2)
  double observation = 0;       // SampleClock's u
  double accuracy_residual = 0;
  double loss = 0;              // the test loss now (with its noise)
  double accuracy = 0;          // the test accuracy now
};

// The surrogate's arithmetic, shared by SurrogateEnv (step by step) and the fit (round by round).
class SurrogateDynamics {
 public:
  explicit SurrogateDynamics(const SurrogateModel& model) : m_(model) {}

  // An untrained model (p = 0, v = 0) and the episode's draws.
  GlobalState start(SurrogateRng& rng) const;
  // `steps` local steps of `batch` samples each at learning-rate factor `lr_factor` (closed form).
  void advance(ReplicaState& replica, double steps, double batch, double lr_factor) const;
  // The test loss of a replica (or the global model) without the observation noise.
  double loss_of(const ReplicaState& replica, const GlobalState& global) const;
  // The mean training loss of a step at `replica`'s state, and one drawn around it.
  double expected_train_loss(const ReplicaState& replica, const GlobalState& global) const;
  double draw_train_loss(const ReplicaState& replica, const GlobalState& global, SurrogateRng& rng) const;
  // The two parts of an average's noise: what is left of the inherited noise, and the round's own.
  struct NoiseParts {
    double progress = 0;
    double inherited = 0;
    double fresh = 0;  // before the draw z, the barrier included
    double penalty = 0;  // the barrier (1 - sum w^2) q r / (1 + r), before z
    double round_steps = 0;  // the members' weighted mean local steps
  };
  NoiseParts average_parts(const std::vector<const ReplicaState*>& members, const std::vector<double>& weights) const;
  // The weighted average of `members` (weights sum to 1): the new state every receiver holds.
  // `rng` null: the mean (z = 1), for fitting.
  ReplicaState average(const std::vector<const ReplicaState*>& members, const std::vector<double>& weights,
                       SurrogateRng* rng) const;
  // After the global model changed to `averaged`: its loss and accuracy with their noise.
  void observe(GlobalState& global, const ReplicaState& averaged, SurrogateRng* rng) const;

  const SurrogateModel& model() const { return m_; }

 private:
  const SurrogateModel& m_;
};

}  // namespace env
