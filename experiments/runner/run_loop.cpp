#include "experiments/runner/run_loop.hpp"

#include <chrono>
#include <cmath>

#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "experiments/results/round_csv.hpp"

namespace experiments {

PolicyOutcome run_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy,
                         env::RoundCluster& cluster, Progress& progress, const std::optional<RunCheckpoint>& resume,
                         const EpochCallback& after_epoch) {
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<std::string> names;
  for (const auto& w : config.cluster.workers) names.push_back(w.name);
  PolicyOutcome out;
  RunTotals totals;
  if (resume) {
    out = resume->outcome;
    totals = resume->totals;
  } else {
    out.label = entry.label;
    out.kind = entry.kind;
    if (config.write_rounds) out.rounds_csv = rounds_csv_header();
    if (config.write_rounds) out.iterations_csv = iterations_csv_header(names);
    out.idle_s_per_worker.assign(names.size(), 0.0);
  }
  out.clock = cluster.clock_kind();
  progress.set_clock(out.clock);
  out.timing_only = config.training.timing_only;
  const double wall_before = resume ? resume->outcome.wall_seconds : 0.0;  // of the run that was cut off

  const Budget& budget = config.budget;
  const bool accuracy = !config.training.timing_only;
  const double time_limit_ms = budget.max_sim_seconds > 0 ? budget.max_sim_seconds * 1000.0 : INFINITY;
  auto record = [&](const EvalPoint& p) {
    out.evals.push_back(p);
    policy.observe_evaluation({p.accuracy, p.loss});
    if (!out.time_to_target_s && p.accuracy >= budget.target_accuracy) out.time_to_target_s = p.clock_s;
  };
  auto finish_outcome = [&](double clock_ms) {
    out.rounds = cluster.rounds();
    out.sim_time_s = clock_ms / 1000.0;
    out.mean_straggler_effect = out.rounds > 0 ? totals.straggler_sum / static_cast<double>(out.rounds) : 0.0;
    out.mean_utilization =
        out.sim_time_s > 0 ? totals.busy_ms / 1000.0 / (static_cast<double>(names.size()) * out.sim_time_s) : 0.0;
    out.final_accuracy = out.evals.empty() ? NAN : out.evals.back().accuracy;
    out.final_loss = out.evals.empty() ? NAN : out.evals.back().loss;
    out.wall_seconds = wall_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };

  policy.start(cluster.view());
  // A resumed run's policy starts afresh; it hears the evaluations it would have seen.
  for (const EvalPoint& p : out.evals) policy.observe_evaluation({p.accuracy, p.loss});
  bool out_of_time = false;
  while (static_cast<int>(out.epochs.size()) < budget.epochs && !out_of_time && !(budget.stop_at_target && out.time_to_target_s)) {
    bool epoch_end = false;
    while (!epoch_end) {
      env::PlanContext context;
      context.round = cluster.rounds();
      context.epoch = cluster.epoch();
      context.epoch_start = !cluster.in_epoch();
      context.clock_ms = cluster.clock_ms();
      const env::RoundReport report = cluster.run_round(policy.plan(context));
      // Every input is finite and in range (common/limits.hpp), so this is a last guard: a clock
      // that is not finite would end the run at once with 0 epochs and look like a result.
      if (!std::isfinite(report.clock_ms))
        throw common::NumericError(entry.label + ": round " + std::to_string(report.round + 1) + ": the clock is " + std::to_string(report.clock_ms) +
                                   " ms, not a finite time: the run stops here (check the time models, perturbations and traces)");
      epoch_end = report.epoch_end;
      policy.observe_round(report);
      if (config.write_rounds) append_round_rows(out.rounds_csv, report, names);
      if (config.write_rounds) append_iteration_row(out.iterations_csv, report);
      totals.straggler_sum += report.straggler_effect;
      for (std::size_t i = 0; i < report.workers.size(); ++i) {
        totals.busy_ms += report.workers[i].compute_ms;
        out.idle_s_per_worker[i] += report.workers[i].idle_ms / 1000.0;
      }
      progress.update(entry.label, cluster.epoch(), budget.epochs, cluster.epoch_progress(), report.clock_ms / 1000.0);
      if (common::run_stop_requested())
        throw common::RunStopped(entry.label + ": stopped at round " + std::to_string(report.round + 1) + ", as asked; its results are not written");
      const bool periodic = budget.eval_every_rounds > 0 && (report.round + 1) % budget.eval_every_rounds == 0;
      if (periodic && !epoch_end && accuracy) {
        const auto eval = cluster.evaluate();
        record({report.round + 1, cluster.epoch(), report.clock_ms / 1000.0, eval.accuracy, eval.loss});
      }
      if (report.clock_ms >= time_limit_ms) {
        out_of_time = true;
        break;
      }
    }
    if (!epoch_end) {  // the time budget ran out inside an epoch
      if (accuracy) {
        const auto eval = cluster.evaluate();
        record({cluster.rounds(), cluster.epoch(), cluster.clock_ms() / 1000.0, eval.accuracy, eval.loss});
      }
      break;
    }
    const env::EpochReport epoch = cluster.finish_epoch();
    cluster.off_the_clock([&] {
      policy.observe_epoch(epoch);
      out.epochs.push_back(epoch);
      if (accuracy) record({cluster.rounds(), epoch.epoch + 1, epoch.clock_ms / 1000.0, epoch.accuracy, epoch.loss});
      progress.epoch_done(entry.label, epoch, budget.epochs);
      if (!after_epoch) return;
      RunCheckpoint checkpoint;
      checkpoint.epochs_done = cluster.epoch();
      checkpoint.rounds = cluster.rounds();
      checkpoint.clock_ms = epoch.clock_ms;
      checkpoint.totals = totals;
      finish_outcome(epoch.clock_ms);
      checkpoint.outcome = out;
      after_epoch(checkpoint);
    });
  }
  finish_outcome(cluster.clock_ms());
  return out;
}

}  // namespace experiments
