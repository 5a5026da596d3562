#include "env/sim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "common/errors.hpp"

namespace env {

Simulation::Simulation(SimulationSpec spec, std::uint64_t seed, TrainingHooks* hooks)
    : spec_(std::move(spec)),
      cluster_(spec_.cluster, derive_seed(seed, 1)),
      data_(spec_.train_samples, derive_seed(seed, 2), hooks != nullptr),
      hooks_(hooks),
      pending_probe_ms_(spec_.cluster.workers.size(), 0.0),
      tally_(spec_.cluster.workers.size()) {}

double Simulation::probe(int worker, int batch) {
  if (worker < 0 || worker >= spec_.cluster.num_workers()) throw common::PlanError("probe of worker " + std::to_string(worker) + " out of range");
  const auto i = static_cast<std::size_t>(worker);
  const double ms = cluster_.probe_ms(worker, batch, clock_ms_ + pending_probe_ms_[i]);
  pending_probe_ms_[i] += ms;  // workers profile in parallel; the slowest sets when training starts
  return ms;
}

ClusterView Simulation::view() {
  ClusterView v = make_cluster_view(spec_.cluster, spec_.network, spec_.global_batch, spec_.train_samples, spec_.message_bytes);
  v.probe_step_ms = [this](int worker, int batch) { return probe(worker, batch); };
  return v;
}

const LinkSpec& Simulation::link_for(const std::vector<int>& members) const {
  for (int m : members)
    if (spec_.cluster.workers[static_cast<std::size_t>(m)].server != spec_.cluster.workers[static_cast<std::size_t>(members[0])].server)
      return spec_.network.inter_server;
  return spec_.network.intra_server;
}

void Simulation::begin_epoch(const RoundPlan& plan) {
  epoch_aggregation_ = plan.aggregation;
  open_epoch(data_, epoch_, plan);
  in_epoch_ = true;
  tally_.start(clock_ms_);
  if (hooks_) hooks_->begin_epoch(epoch_);
}

RoundReport Simulation::run_round(const RoundPlan& plan) {
  if (epoch_finished()) throw common::PlanError("the epoch has finished: call finish_epoch() first");
  validate_plan(plan, spec_.cluster, in_epoch_, epoch_aggregation_);
  // Profiling done since the last round runs on all workers at once; the slowest decides.
  const double probing = *std::max_element(pending_probe_ms_.begin(), pending_probe_ms_.end());
  clock_ms_ += probing;
  std::fill(pending_probe_ms_.begin(), pending_probe_ms_.end(), 0.0);
  if (!in_epoch_) begin_epoch(plan);

  RoundReport report;
  report.round = round_;
  report.epoch = epoch_;
  report.barrier_ms = plan.barrier_ms;
  report.workers.assign(spec_.cluster.workers.size(), WorkerRoundStats{});
  round_loss_sum_ = 0;
  round_loss_count_ = 0;
  const double start = clock_ms_;
  if (plan.aggregation == Aggregation::GradientAllReduce)
    run_gradient_round(plan, report);
  else
    run_average_round(plan, report);
  std::int64_t processed = 0;
  for (const auto& w : report.workers) processed += w.samples;
  if (processed == 0)
    throw common::PlanError("the plan processes no samples: the workers with data left in this epoch have batch 0 or no local steps");

  report.round_ms = report.clock_ms - start;
  if (round_loss_count_ > 0) report.train_loss = round_loss_sum_ / static_cast<double>(round_loss_count_);
  report.straggler_effect = straggler_effect_of(report.workers);
  clock_ms_ = report.clock_ms;
  tally_.add_round(report);
  ++round_;
  report.epoch_end = data_.exhausted();
  return report;
}

void Simulation::run_gradient_round(const RoundPlan& plan, RoundReport& report) {
  const std::size_t n = plan.workers.size();
  const std::vector<std::int64_t> sizes = stream_batch_sizes(plan.workers, data_.stream_remaining());

  std::vector<IndexSpan> batches(n);
  std::vector<int> members;
  std::vector<double> busy(n, 0.0);  // compute plus the step's data loading (RoundOverhead)
  double slowest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    batches[i] = data_.take_stream(sizes[i]);
    auto& w = report.workers[i];
    if (batches[i].size == 0) continue;
    members.push_back(static_cast<int>(i));
    w.batch_size = static_cast<int>(batches[i].size);
    w.local_steps = 1;
    w.samples = w.batch_size;
    w.compute_ms = cluster_.step_ms(static_cast<int>(i), w.batch_size, clock_ms_);
    busy[i] = w.compute_ms + spec_.cluster.overhead.per_step_ms;
    slowest = std::max(slowest, busy[i]);
  }
  for (std::size_t i = 0; i < n; ++i) report.workers[i].idle_ms = slowest - busy[i];  // everyone waits for the slowest
  if (hooks_) add_loss(hooks_->gradient_round(batches));
  report.comm_ms = members.empty() ? 0.0 : ring_allreduce_ms(static_cast<int>(members.size()), spec_.message_bytes, link_for(members));
  report.clock_ms = clock_ms_ + slowest + report.comm_ms + spec_.cluster.overhead.fixed_ms;
}

// The round describe_averaging_round gives, on the simulated clock: each worker's steps at its
// own pace, a barrier (the slowest member) before every average, the cost model's all-reduce.
void Simulation::run_average_round(const RoundPlan& plan, RoundReport& report) {
  const std::size_t n = plan.workers.size();
  rebalance_shards(data_, plan, spec_.shards);
  const AveragingRound round = describe_averaging_round(plan, spec_.cluster, data_);
  std::vector<double> now(n, clock_ms_);
  if (hooks_ && round.global.needs_round_start()) hooks_->begin_global_round(round.global);

  for (const AveragingChunk& chunk : round.chunks) {
    std::vector<std::vector<IndexSpan>> chunk_batches(n);
    for (std::size_t i = 0; i < n; ++i) {
      auto& stats = report.workers[i];
      for (std::int64_t s = chunk.first; s < std::min(chunk.end, round.steps[i]); ++s) {
        const IndexSpan batch = data_.take_shard(static_cast<int>(i), plan.workers[i].batch_size);
        const double ms = cluster_.step_ms(static_cast<int>(i), static_cast<int>(batch.size), now[i]);
        now[i] += ms + spec_.cluster.overhead.per_step_ms;
        stats.compute_ms += ms;
        stats.samples += static_cast<int>(batch.size);
        stats.batch_size = std::max(stats.batch_size, static_cast<int>(batch.size));
        ++stats.local_steps;
        chunk_batches[i].push_back(batch);
      }
    }
    if (hooks_)
      for (double loss : hooks_->local_steps(chunk_batches)) add_loss(loss);
    for (const AverageGroup& server : chunk.server_averages) {  // MLLSGD, over the fast intra-server link
      double barrier = 0;
      for (int m : server.members) barrier = std::max(barrier, now[static_cast<std::size_t>(m)]);
      const double comm = ring_allreduce_ms(static_cast<int>(server.members.size()), spec_.message_bytes, spec_.network.intra_server);
      for (int m : server.members) {
        report.workers[static_cast<std::size_t>(m)].idle_ms += barrier - now[static_cast<std::size_t>(m)];
        now[static_cast<std::size_t>(m)] = barrier + comm;
      }
      if (hooks_) hooks_->average(server, server.members);
    }
  }

  // The global barrier: every worker that took part waits for the slowest, then all average.
  double barrier = clock_ms_;
  for (int m : round.took_part) barrier = std::max(barrier, now[static_cast<std::size_t>(m)]);
  for (std::size_t i = 0; i < n; ++i) report.workers[i].idle_ms += barrier - (round.steps[i] > 0 ? now[i] : clock_ms_);
  const std::vector<int>& averaged = round.global.members;
  const auto& workers = spec_.cluster.workers;
  if (round.hierarchical) {
    // Hierarchical: reduce inside each server, ring across servers, broadcast inside each server.
    std::vector<int> per_server(static_cast<std::size_t>(spec_.cluster.num_servers()), 0);
    for (int m : averaged) ++per_server[static_cast<std::size_t>(workers[static_cast<std::size_t>(m)].server)];
    const int servers = static_cast<int>(std::count_if(per_server.begin(), per_server.end(), [](int c) { return c > 0; }));
    const int widest = *std::max_element(per_server.begin(), per_server.end());
    report.comm_ms = ring_allreduce_ms(widest, spec_.message_bytes, spec_.network.intra_server) +
                     ring_allreduce_ms(servers, spec_.message_bytes, spec_.network.inter_server);
  } else {
    report.comm_ms = averaged.empty() ? 0.0 : ring_allreduce_ms(static_cast<int>(averaged.size()), spec_.message_bytes, link_for(averaged));
  }
  if (hooks_ && !averaged.empty()) {
    if (round.global.needs_round_start()) {
      hooks_->global_update(round.global);
    } else {
      std::vector<int> everyone(n);
      std::iota(everyone.begin(), everyone.end(), 0);
      hooks_->average(round.global, everyone);
    }
  }
  report.clock_ms = barrier + report.comm_ms + spec_.cluster.overhead.fixed_ms;
}

void Simulation::add_loss(double loss) {
  tally_.add_loss(loss, 1);
  round_loss_sum_ += loss;
  ++round_loss_count_;
}

EpochReport Simulation::finish_epoch() {
  if (!epoch_finished()) throw common::PlanError("finish_epoch() before the epoch's data is used up");
  EpochReport r = tally_.finish(epoch_, clock_ms_);
  in_epoch_ = false;
  ++epoch_;
  return r;
}

double Simulation::epoch_progress() const {
  if (!in_epoch_ || data_.samples() == 0) return 0.0;
  return static_cast<double>(data_.consumed()) / static_cast<double>(data_.samples());
}

}  // namespace env
