#include "experiments/surrogate/surrogate_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace experiments {
namespace {

// One logged round through the model from `global`: the members' replicas, their weights, and the
// steps-weighted mean of each member's loss at the start and the end of its local steps (a step's
// training loss is taken at the state before it, so a round's mean lies between the two).
struct RoundThrough {
  std::vector<env::ReplicaState> replicas;
  std::vector<const env::ReplicaState*> members;
  std::vector<double> weights;
  double train_loss = 0;
  int steps = 0;
};

void run_round(const env::SurrogateDynamics& dynamics, const env::GlobalState& global, const LoggedRound& round, double task_lr,
               RoundThrough& out) {
  const double lr_factor = task_lr > 0 ? round.lr / task_lr : 1.0;
  const std::size_t n = round.workers.size();
  out.replicas.assign(n, global.model);
  out.members.clear();
  out.weights.clear();
  double samples = 0, loss_sum = 0, member_steps = 0;
  int members = 0;
  for (const auto& w : round.workers)
    if (w.steps > 0) {
      ++members;
      samples += w.samples;
    }
  const double start_loss = dynamics.loss_of(global.model, global);
  for (std::size_t i = 0; i < n; ++i) {
    const LoggedWorker& w = round.workers[i];
    const bool member = w.steps > 0;
    if (member) {
      dynamics.advance(out.replicas[i], w.steps, w.samples / w.steps, lr_factor);
      loss_sum += w.steps * 0.5 * (start_loss + dynamics.loss_of(out.replicas[i], global));
      member_steps += w.steps;
    }
    double weight = 0;
    switch (round.weighting) {
      case env::AverageWeighting::AllWorkers: weight = 1.0 / static_cast<double>(n); break;
      case env::AverageWeighting::BySamples:
      case env::AverageWeighting::FedNova: weight = member ? w.samples / samples : 0.0; break;
      case env::AverageWeighting::Uniform: weight = member ? 1.0 / members : 0.0; break;
    }
    if (weight > 0) {
      out.members.push_back(&out.replicas[i]);
      out.weights.push_back(weight);
    }
  }
  out.train_loss = member_steps > 0 ? loss_sum / member_steps : start_loss;
  out.steps = static_cast<int>(member_steps);
}

}  // namespace

ReplayTrace replay_mean(const env::SurrogateDynamics& dynamics, const LoggedEpisode& episode, double task_lr, ReplayMode mode) {
  const env::SurrogateModel& model = dynamics.model();
  ReplayTrace trace;
  env::GlobalState global;
  dynamics.observe(global, env::ReplicaState{}, nullptr);
  trace.initial_loss = global.loss;
  RoundThrough through;
  double previous_logged = episode.initial_loss;
  for (const LoggedRound& round : episode.rounds) {
    if (mode == ReplayMode::Filtered && model.form == env::SurrogateForm::ProgressNoise) {
      global.model.inherited = std::max(previous_logged - model.curve.at(global.model.progress), 0.0);
      global.model.decay = 1;
      global.model.penalty = 0;
    }
    run_round(dynamics, global, round, task_lr, through);
    const auto parts = dynamics.average_parts(through.members, through.weights);
    const env::ReplicaState averaged = dynamics.average(through.members, through.weights, nullptr);
    dynamics.observe(global, averaged, nullptr);
    trace.loss.push_back(global.loss);
    // The map the environment reads (observe()): with a calibrated steps gain, the round's local
    // steps move it too; without them --judge's accuracy RMSE and --paths judged another map.
    trace.accuracy.push_back(model.accuracy.at(global.loss, averaged.round_steps));
    trace.train_loss.push_back(through.train_loss);
    trace.fresh.push_back(parts.fresh);
    trace.steps.push_back(through.steps);
    previous_logged = round.loss;
  }
  return trace;
}

std::optional<double> replay_time_to_target(const env::SurrogateDynamics& dynamics, const LoggedEpisode& episode, double task_lr,
                                            double target, env::SurrogateRng& rng) {
  env::GlobalState global = dynamics.start(rng);
  if (global.accuracy >= target) return 0.0;
  RoundThrough through;
  for (const LoggedRound& round : episode.rounds) {
    run_round(dynamics, global, round, task_lr, through);
    const env::ReplicaState averaged = dynamics.average(through.members, through.weights, &rng);
    dynamics.observe(global, averaged, &rng);
    if (global.accuracy >= target) return round.clock_ms;
  }
  return std::nullopt;
}

std::string replayed_paths_csv(const env::SurrogateModel& model, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes) {
  const env::SurrogateDynamics dynamics(model);
  std::string csv = "source,episode,static,round,workers,members,steps_mean,batch_mean,progress,logged_loss,model_loss,logged_accuracy,"
                    "model_accuracy,logged_train_loss,model_train_loss\n";
  char line[512];
  for (const LoggedEpisode* e : episodes) {
    const ReplayTrace trace = replay_mean(dynamics, *e, logs.task.lr, ReplayMode::Mean);
    for (std::size_t t = 0; t < e->rounds.size(); ++t) {
      const LoggedRound& r = e->rounds[t];
      double steps = 0, samples = 0;
      int members = 0;
      for (const auto& w : r.workers)
        if (w.steps > 0) {
          ++members;
          steps += w.steps;
          samples += w.samples;
        }
      std::snprintf(line, sizeof line, "%s,%lld,%d,%zu,%zu,%d,%.3f,%.2f,%.5f,%.6g,%.6g,%.4f,%.5f,%.6g,%.6g\n", e->source.c_str(),
                    static_cast<long long>(e->id), e->static_barrier ? 1 : 0, t, r.workers.size(), members, members ? steps / members : 0.0,
                    steps > 0 ? samples / steps : 0.0, r.progress, r.loss, trace.loss[t], r.accuracy, trace.accuracy[t], r.train_loss,
                    trace.train_loss[t] * std::exp(model.train_loss.log_gap));
      csv += line;
    }
  }
  return csv;
}

std::optional<double> logged_time_to_target(const LoggedEpisode& episode, double target) {
  if (episode.initial_accuracy >= target) return 0.0;
  for (const LoggedRound& round : episode.rounds)
    if (round.accuracy >= target) return round.clock_ms;
  return std::nullopt;
}

}  // namespace experiments
