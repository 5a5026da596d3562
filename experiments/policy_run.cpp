#include "experiments/policy_run.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "env/local_sgd_env.hpp"
#include "experiments/round_csv.hpp"

namespace experiments {
namespace {

}  // namespace

PolicyOutcome run_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy,
                         std::shared_ptr<const env::DatasetPair> data, Progress& progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  env::EnvSpec spec;
  spec.simulation.cluster = config.cluster;
  spec.simulation.network = config.network;
  spec.simulation.global_batch = config.global_batch;
  spec.simulation.train_samples = config.timing_train_samples;
  spec.simulation.message_bytes = config.network.message_bytes;
  spec.training = config.training;
  env::LocalSgdEnv environment(spec, config.training.timing_only ? nullptr : data, config.seed, env::input_shape_of(config.data));

  PolicyOutcome out;
  out.label = entry.label;
  out.kind = entry.kind;
  std::vector<std::string> names;
  for (const auto& w : config.cluster.workers) names.push_back(w.name);
  if (config.write_rounds) out.rounds_csv = rounds_csv_header();
  if (config.write_rounds) out.iterations_csv = iterations_csv_header(names);
  out.idle_s_per_worker.assign(names.size(), 0.0);

  const Budget& budget = config.budget;
  const double time_limit_ms = budget.max_sim_seconds > 0 ? budget.max_sim_seconds * 1000.0 : INFINITY;
  auto record = [&](const EvalPoint& p) {
    out.evals.push_back(p);
    if (!out.time_to_target_s && p.accuracy >= budget.target_accuracy) out.time_to_target_s = p.clock_s;
  };

  policy.start(environment.view());
  double se_sum = 0, busy_ms = 0;
  bool out_of_time = false;
  while (static_cast<int>(out.epochs.size()) < budget.epochs && !out_of_time &&
         !(budget.stop_at_target && out.time_to_target_s)) {
    while (!environment.epoch_finished()) {
      env::PlanContext context;
      context.round = environment.rounds();
      context.epoch = environment.epoch();
      context.epoch_start = !environment.in_epoch();
      context.clock_ms = environment.clock_ms();
      const env::RoundReport report = environment.run_round(policy.plan(context));
      policy.observe_round(report);
      if (config.write_rounds) append_round_rows(out.rounds_csv, report, names);
      if (config.write_rounds) append_iteration_row(out.iterations_csv, report);
      se_sum += report.straggler_effect;
      for (std::size_t i = 0; i < report.workers.size(); ++i) {
        busy_ms += report.workers[i].compute_ms;
        out.idle_s_per_worker[i] += report.workers[i].idle_ms / 1000.0;
      }
      progress.update(entry.label, environment.epoch(), budget.epochs, environment.epoch_progress(), report.clock_ms / 1000.0);
      const bool periodic = budget.eval_every_rounds > 0 && (report.round + 1) % budget.eval_every_rounds == 0;
      if (periodic && !report.epoch_end && !config.training.timing_only) {
        const auto eval = environment.evaluate();
        record({report.round + 1, environment.epoch(), report.clock_ms / 1000.0, eval.accuracy, eval.loss});
      }
      if (report.clock_ms >= time_limit_ms) {
        out_of_time = true;
        break;
      }
    }
    if (!environment.epoch_finished()) {  // the time budget ran out inside an epoch
      const auto eval = environment.evaluate();
      if (!config.training.timing_only) record({environment.rounds(), environment.epoch(), environment.clock_ms() / 1000.0, eval.accuracy, eval.loss});
      break;
    }
    const env::EpochReport epoch = environment.finish_epoch();
    policy.observe_epoch(epoch);
    out.epochs.push_back(epoch);
    if (!config.training.timing_only) record({environment.rounds(), epoch.epoch + 1, epoch.clock_ms / 1000.0, epoch.accuracy, epoch.loss});
    progress.epoch_done(entry.label, epoch, budget.epochs);
  }

  out.rounds = environment.rounds();
  out.timing_only = config.training.timing_only;
  out.sim_time_s = environment.clock_ms() / 1000.0;
  out.mean_straggler_effect = out.rounds > 0 ? se_sum / static_cast<double>(out.rounds) : 0.0;
  out.mean_utilization = out.sim_time_s > 0 ? busy_ms / 1000.0 / (static_cast<double>(names.size()) * out.sim_time_s) : 0.0;
  if (!out.evals.empty()) {
    out.final_accuracy = out.evals.back().accuracy;
    out.final_loss = out.evals.back().loss;
  } else {
    out.final_accuracy = out.final_loss = NAN;
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace experiments
