#include "experiments/real_leader.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <numeric>

#include "env/errors.hpp"
#include "env/network.hpp"
#include "env/simulation.hpp"
#include "experiments/round_csv.hpp"
#include "experiments/real_protocol.hpp"

namespace experiments {
namespace {

using Clock = std::chrono::steady_clock;

// Wall time spent training; evaluation and result writing are paused out.
class RunClock {
 public:
  explicit RunClock(double offset_ms) : offset_ms_(offset_ms), start_(Clock::now()) {}
  double now_ms() const { return offset_ms_ + std::chrono::duration<double, std::milli>(Clock::now() - start_).count() - paused_ms_; }
  template <class F>
  auto excluded(F&& f) {
    const auto start = Clock::now();
    struct Resume {
      RunClock& clock;
      Clock::time_point start;
      ~Resume() { clock.paused_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }
    } resume{*this, start};
    return f();
  }

 private:
  double offset_ms_;
  Clock::time_point start_;
  double paused_ms_ = 0;
};

// An epoch's totals over its rounds, as Simulation::finish_epoch computes them.
struct EpochTally {
  explicit EpochTally(std::size_t n) : busy(n, 0.0), idle(n, 0.0), steps(n, 0) {}
  void start(double clock_ms) {
    *this = EpochTally(busy.size());
    start_ms = clock_ms;
  }
  void add(const env::RoundReport& r, const std::vector<env::RealRoundStats>& stats, env::Aggregation aggregation) {
    for (std::size_t i = 0; i < r.workers.size(); ++i) {
      busy[i] += r.workers[i].compute_ms;
      idle[i] += r.workers[i].idle_ms;
      steps[i] += r.workers[i].local_steps;
    }
    se_sum += r.straggler_effect;
    ++rounds;
    // Under gradient all-reduce a round's loss is the B_i/B-weighted sum over ranks, one value per
    // round; under averaging every local step counts (as the simulator's hooks report them).
    double loss = 0;
    int count = 0;
    for (const auto& s : stats) loss += s.loss_sum, count += s.loss_count;
    if (aggregation == env::Aggregation::GradientAllReduce) count = 1;
    loss_sum += loss;
    loss_count += count;
  }
  env::EpochReport finish(int epoch, double clock_ms) const {
    env::EpochReport e;
    e.epoch = epoch;
    e.rounds = rounds;
    e.clock_ms = clock_ms;
    e.epoch_ms = clock_ms - start_ms;
    e.train_loss = loss_count > 0 ? loss_sum / static_cast<double>(loss_count) : NAN;
    e.mean_straggler_effect = rounds > 0 ? se_sum / static_cast<double>(rounds) : 0.0;
    const double total = std::accumulate(busy.begin(), busy.end(), 0.0);
    e.utilization = e.epoch_ms > 0 ? total / (static_cast<double>(busy.size()) * e.epoch_ms) : 0.0;
    e.worker_busy_ms = busy;
    e.worker_idle_ms = idle;
    e.worker_steps = steps;
    return e;
  }

  std::vector<double> busy, idle;
  std::vector<std::int64_t> steps;
  double start_ms = 0, se_sum = 0, loss_sum = 0;
  std::int64_t rounds = 0, loss_count = 0;
};

// The measured round as a RoundReport. Each rank's sync time is its wait for the slowest plus the
// transfer; the rank that arrived last waited for nobody, so the smallest sync time is the
// communication and the rest of each rank's is idle.
env::RoundReport assemble(std::int64_t round, int epoch, const env::RoundPlan& plan, const std::vector<env::RealRoundStats>& stats,
                          double start_ms, double end_ms) {
  env::RoundReport r;
  r.round = round;
  r.epoch = epoch;
  r.barrier_ms = plan.barrier_ms;
  r.comm_ms = std::numeric_limits<double>::infinity();
  for (const auto& s : stats) r.comm_ms = std::min(r.comm_ms, s.sync_ms);
  for (const auto& s : stats) {
    env::WorkerRoundStats w = s.worker;
    w.idle_ms = std::max(0.0, s.sync_ms - r.comm_ms);
    r.workers.push_back(w);
  }
  r.round_ms = end_ms - start_ms;
  r.clock_ms = end_ms;
  r.straggler_effect = env::straggler_effect_of(r.workers);
  r.epoch_end = stats.front().epoch_end;
  return r;
}

// Rank 0's probe_step_ms: one request makes every rank time the same batch size at once, and the
// other ranks' answers are kept for when the policy asks for them (LBB Alg. 1 profiles the workers
// one after the other; here they profile in parallel, as on a real cluster).
class ProbeCache {
 public:
  ProbeCache(env::Communicator& comm, env::RealWorker& worker, std::function<ControlMessage(ControlMessage)> send)
      : comm_(comm), worker_(worker), send_(std::move(send)) {}
  double operator()(int rank, int batch, double clock_ms) {
    if (rank < 0 || rank >= comm_.world_size()) throw env::PlanError("probe of worker " + std::to_string(rank) + " out of range");
    auto& queue = cache_[{rank, batch}];
    if (queue.empty()) {
      ControlMessage m;
      m.kind = ControlKind::Probe;
      m.probe_batch = batch;
      send_(m);
      const auto all = gather_probe(comm_, worker_.probe_ms(batch, clock_ms), batch);
      for (int r = 0; r < comm_.world_size(); ++r) cache_[{r, batch}].push_back(all[static_cast<std::size_t>(r)]);
    }
    const double ms = queue.front();
    queue.pop_front();
    return ms;
  }

 private:
  env::Communicator& comm_;
  env::RealWorker& worker_;
  std::function<ControlMessage(ControlMessage)> send_;
  std::map<std::pair<int, int>, std::deque<double>> cache_;
};

env::ClusterView view_of(const ExperimentConfig& config, env::RealWorker& worker, std::int64_t train_samples) {
  env::ClusterView v;
  const auto& c = config.cluster;
  v.num_workers = c.num_workers();
  v.global_batch = config.global_batch;
  v.train_samples = train_samples;
  v.num_servers = c.num_servers();
  v.parameter_bytes = worker.replicas().parameter_bytes();
  for (const auto& w : c.workers) {
    v.worker_names.push_back(w.name);
    v.max_batch.push_back(w.max_batch);
    v.server_of.push_back(w.server);
  }
  // A policy's estimate only (LBB's drop test): the configured link model, as in simulation.
  const env::LinkSpec link = c.num_servers() > 1 ? config.network.inter_server : config.network.intra_server;
  const double bytes = v.parameter_bytes;
  v.allreduce_ms = [link, bytes](int participants) { return env::ring_allreduce_ms(participants, bytes, link); };
  return v;
}

}  // namespace

PolicyOutcome lead_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy, env::RealWorker& worker,
                          env::Communicator& comm, const env::Dataset& test, Progress& progress, const std::optional<RealCheckpoint>& resume,
                          const EpochCallback& after_epoch) {
  const auto wall_start = Clock::now();
  std::vector<std::string> names;
  for (const auto& w : config.cluster.workers) names.push_back(w.name);
  PolicyOutcome out;
  RunTotals totals;
  std::int64_t round = 0;
  if (resume) {
    out = resume->outcome;
    totals = resume->totals;
    round = resume->rounds;
  } else {
    out.label = entry.label;
    out.kind = entry.kind;
    if (config.write_rounds) out.rounds_csv = rounds_csv_header();
    if (config.write_rounds) out.iterations_csv = iterations_csv_header(names);
    out.idle_s_per_worker.assign(names.size(), 0.0);
  }
  RunClock clock(resume ? resume->clock_ms : 0.0);
  const double wall_before = resume ? resume->outcome.wall_seconds : 0.0;  // of the run that was cut off
  std::int64_t seq = 0;
  auto send = [&](ControlMessage m) {
    m.seq = seq++;
    m.clock_ms = clock.now_ms();
    return exchange_control(comm, m, m.seq);
  };
  const Budget& budget = config.budget;
  auto record = [&](const EvalPoint& p) {
    out.evals.push_back(p);
    if (!out.time_to_target_s && p.accuracy >= budget.target_accuracy) out.time_to_target_s = p.clock_s;
  };
  auto finish_outcome = [&](double clock_ms) {
    out.rounds = round;
    out.sim_time_s = clock_ms / 1000.0;
    out.mean_straggler_effect = round > 0 ? totals.straggler_sum / static_cast<double>(round) : 0.0;
    out.mean_utilization = out.sim_time_s > 0 ? totals.busy_ms / 1000.0 / (static_cast<double>(names.size()) * out.sim_time_s) : 0.0;
    out.final_accuracy = out.evals.empty() ? NAN : out.evals.back().accuracy;
    out.final_loss = out.evals.empty() ? NAN : out.evals.back().loss;
    out.wall_seconds = wall_before + std::chrono::duration<double>(Clock::now() - wall_start).count();
  };

  try {
    if (resume) {
      ControlMessage m;
      m.kind = ControlKind::Resume;
      m.epoch = resume->epochs_done;
      m.round = resume->rounds;
      send(m);
      worker.broadcast_model_from(0);
      worker.start_at_epoch(resume->epochs_done);
    }
    ProbeCache probes(comm, worker, send);
    env::ClusterView view = view_of(config, worker, worker.train_samples());
    view.probe_step_ms = [&](int rank, int batch) { return probes(rank, batch, clock.now_ms()); };
    policy.start(view);

    const double time_limit_ms = budget.max_sim_seconds > 0 ? budget.max_sim_seconds * 1000.0 : INFINITY;
    EpochTally tally(names.size());
    bool out_of_time = false;
    while (static_cast<int>(out.epochs.size()) < budget.epochs && !out_of_time && !(budget.stop_at_target && out.time_to_target_s)) {
      tally.start(clock.now_ms());
      const int epoch = worker.epoch();
      bool epoch_end = false;
      while (!epoch_end) {
        env::PlanContext context;
        context.round = round;
        context.epoch = epoch;
        context.epoch_start = !worker.in_epoch();
        context.clock_ms = clock.now_ms();
        ControlMessage m;
        m.kind = ControlKind::Round;
        m.round = round;
        m.epoch = epoch;
        m.plan = policy.plan(context);
        worker.check(m.plan);
        const double start_ms = clock.now_ms();
        send(m);
        const env::RealRoundStats mine = worker.run_round(round, m.plan, start_ms);
        const auto stats = gather_stats(comm, mine, round);
        const env::RoundReport report = assemble(round, epoch, m.plan, stats, start_ms, clock.now_ms());
        ++round;
        epoch_end = report.epoch_end;
        policy.observe_round(report);
        tally.add(report, stats, m.plan.aggregation);
        if (config.write_rounds) append_round_rows(out.rounds_csv, report, names);
        if (config.write_rounds) append_iteration_row(out.iterations_csv, report);
        totals.straggler_sum += report.straggler_effect;
        for (std::size_t i = 0; i < report.workers.size(); ++i) {
          totals.busy_ms += report.workers[i].compute_ms;
          out.idle_s_per_worker[i] += report.workers[i].idle_ms / 1000.0;
        }
        progress.update(entry.label, epoch, budget.epochs, worker.epoch_progress(), report.clock_ms / 1000.0);
        const bool periodic = budget.eval_every_rounds > 0 && round % budget.eval_every_rounds == 0;
        if (periodic && !epoch_end) {
          const auto eval = clock.excluded([&] { return worker.replicas().evaluate(test); });
          record({round, epoch, report.clock_ms / 1000.0, eval.accuracy, eval.loss});
        }
        if (report.clock_ms >= time_limit_ms) {
          out_of_time = true;
          break;
        }
      }
      if (!epoch_end) {  // the time budget ran out inside an epoch
        const auto eval = clock.excluded([&] { return worker.replicas().evaluate(test); });
        record({round, epoch, clock.now_ms() / 1000.0, eval.accuracy, eval.loss});
        break;
      }
      env::EpochReport report = tally.finish(epoch, clock.now_ms());
      clock.excluded([&] {
        const auto eval = worker.replicas().evaluate(test);
        report.accuracy = eval.accuracy;
        report.loss = eval.loss;
        policy.observe_epoch(report);
        out.epochs.push_back(report);
        record({round, epoch + 1, report.clock_ms / 1000.0, report.accuracy, report.loss});
        progress.epoch_done(entry.label, report, budget.epochs);
        RealCheckpoint checkpoint;
        checkpoint.epochs_done = worker.epoch();
        checkpoint.rounds = round;
        checkpoint.clock_ms = report.clock_ms;
        checkpoint.totals = totals;
        finish_outcome(report.clock_ms);
        checkpoint.outcome = out;
        after_epoch(checkpoint);
        return 0;
      });
    }
    finish_outcome(clock.now_ms());
    ControlMessage end;
    end.kind = ControlKind::EndPolicy;
    send(end);
  } catch (const env::CommError&) {
    throw;  // the group is broken: nothing can be sent
  } catch (const std::exception& e) {
    ControlMessage abort;
    abort.kind = ControlKind::Abort;
    abort.reason = e.what();
    try {
      send(abort);
    } catch (const env::CommError&) {
      // The others stop on their own timeout; the original error is what the user needs.
    }
    throw;
  }
  return out;
}

void follow_policy(env::RealWorker& worker, env::Communicator& comm) {
  for (std::int64_t seq = 0;; ++seq) {
    const ControlMessage m = exchange_control(comm, ControlMessage{}, seq);
    switch (m.kind) {
      case ControlKind::Round: {
        const env::RealRoundStats mine = worker.run_round(m.round, m.plan, m.clock_ms);
        gather_stats(comm, mine, m.round);
        break;
      }
      case ControlKind::Probe: gather_probe(comm, worker.probe_ms(m.probe_batch, m.clock_ms), m.probe_batch); break;
      case ControlKind::Resume:
        worker.broadcast_model_from(0);
        worker.start_at_epoch(m.epoch);
        break;
      case ControlKind::EndPolicy: return;
      case ControlKind::Abort: throw std::runtime_error("rank 0 stopped the run: " + m.reason);
    }
  }
}

}  // namespace experiments
