#include "env/real/real_cluster.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "common/errors.hpp"

namespace env {
namespace {

using Clock = std::chrono::steady_clock;

// The measured round as a RoundReport. Each rank's sync time is its wait for the slowest plus the
// transfer; the rank that arrived last waited for nobody, so the smallest sync time is the
// communication and the rest of each rank's is idle.
RoundReport assemble(std::int64_t round, int epoch, const RoundPlan& plan, const std::vector<RealRoundStats>& stats, double start_ms,
                     double end_ms) {
  RoundReport r;
  r.round = round;
  r.epoch = epoch;
  r.barrier_ms = plan.barrier_ms;
  r.comm_ms = std::numeric_limits<double>::infinity();
  for (const auto& s : stats) r.comm_ms = std::min(r.comm_ms, s.sync_ms);
  for (const auto& s : stats) {
    WorkerRoundStats w = s.worker;
    w.idle_ms = std::max(0.0, s.sync_ms - r.comm_ms);
    r.workers.push_back(w);
  }
  r.round_ms = end_ms - start_ms;
  r.clock_ms = end_ms;
  r.straggler_effect = straggler_effect_of(r.workers);
  r.epoch_end = stats.front().epoch_end;
  return r;
}

}  // namespace

double RunClock::now_ms() const {
  return offset_ms_ + std::chrono::duration<double, std::milli>(Clock::now() - start_).count() - paused_ms_;
}

void RunClock::excluded(const std::function<void()>& work) {
  const auto start = Clock::now();
  struct Resume {
    RunClock& clock;
    Clock::time_point start;
    ~Resume() { clock.paused_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }
  } resume{*this, start};
  work();
}

RealCluster::RealCluster(RealClusterSpec spec, RealWorker& worker, Communicator& comm, const Dataset& test,
                         const std::optional<ResumePoint>& resume)
    : spec_(std::move(spec)),
      worker_(worker),
      comm_(comm),
      test_(test),
      clock_(resume ? resume->clock_ms : 0.0),
      tally_(spec_.cluster.workers.size()) {
  if (!resume) return;
  ControlMessage m;
  m.kind = ControlKind::Resume;
  m.epoch = resume->epochs_done;
  m.round = resume->rounds;
  send(m);
  worker_.broadcast_model_from(0);
  worker_.start_at_epoch(resume->epochs_done);
  round_ = resume->rounds;
  epoch_ = resume->epochs_done;
}

ControlMessage RealCluster::send(ControlMessage message) {
  message.seq = seq_++;
  message.clock_ms = clock_.now_ms();
  return exchange_control(comm_, message, message.seq);
}

double RealCluster::probe(int rank, int batch) {
  if (rank < 0 || rank >= comm_.world_size()) throw common::PlanError("probe of worker " + std::to_string(rank) + " out of range");
  auto& queue = probes_[{rank, batch}];
  if (queue.empty()) {
    ControlMessage m;
    m.kind = ControlKind::Probe;
    m.probe_batch = batch;
    send(m);
    const auto all = gather_probe(comm_, worker_.probe_ms(batch, clock_.now_ms()), batch);
    for (int r = 0; r < comm_.world_size(); ++r) probes_[{r, batch}].push_back(all[static_cast<std::size_t>(r)]);
  }
  const double ms = queue.front();
  queue.pop_front();
  return ms;
}

ClusterView RealCluster::view() {
  ClusterView v = make_cluster_view(spec_.cluster, spec_.network, spec_.global_batch, worker_.train_samples(),
                                    worker_.replicas().parameter_bytes());
  v.probe_step_ms = [this](int rank, int batch) { return probe(rank, batch); };
  return v;
}

RoundReport RealCluster::run_round(const RoundPlan& plan) {
  worker_.check(plan);
  if (!in_epoch_) {
    tally_.start(clock_.now_ms());
    in_epoch_ = true;
  }
  ControlMessage m;
  m.kind = ControlKind::Round;
  m.round = round_;
  m.epoch = epoch_;
  m.plan = plan;
  const double start_ms = clock_.now_ms();
  send(m);
  const RealRoundStats mine = worker_.run_round(round_, plan, start_ms);
  const auto stats = gather_stats(comm_, mine, round_);
  RoundReport report = assemble(round_, epoch_, plan, stats, start_ms, clock_.now_ms());
  ++round_;
  tally_.add_round(report);
  // Under gradient all-reduce a round's loss is the B_i/B-weighted sum over ranks, one value per
  // round; under averaging every local step counts (as the simulator's hooks report them).
  double loss = 0;
  std::int64_t count = 0;
  for (const auto& s : stats) loss += s.loss_sum, count += s.loss_count;
  if (plan.aggregation == Aggregation::GradientAllReduce) count = 1;
  tally_.add_loss(loss, count);
  if (count > 0) report.train_loss = loss / static_cast<double>(count);
  return report;
}

EpochReport RealCluster::finish_epoch() {
  EpochReport report = tally_.finish(epoch_, clock_.now_ms());
  const EvalResult eval = evaluate();
  report.accuracy = eval.accuracy;
  report.loss = eval.loss;
  in_epoch_ = false;
  ++epoch_;
  return report;
}

EvalResult RealCluster::evaluate() {
  EvalResult eval;
  clock_.excluded([&] { eval = worker_.replicas().evaluate(test_); });
  return eval;
}

void RealCluster::end() {
  ControlMessage m;
  m.kind = ControlKind::EndPolicy;
  send(m);
}

void RealCluster::abort(const std::string& reason) {
  ControlMessage m;
  m.kind = ControlKind::Abort;
  m.reason = reason;
  send(m);
}

void follow_policy(RealWorker& worker, Communicator& comm) {
  for (std::int64_t seq = 0;; ++seq) {
    const ControlMessage m = exchange_control(comm, ControlMessage{}, seq);
    switch (m.kind) {
      case ControlKind::Round: {
        const RealRoundStats mine = worker.run_round(m.round, m.plan, m.clock_ms);
        gather_stats(comm, mine, m.round);
        break;
      }
      case ControlKind::Probe: gather_probe(comm, worker.probe_ms(m.probe_batch, m.clock_ms), m.probe_batch); break;
      case ControlKind::Resume:
        worker.broadcast_model_from(0);
        worker.start_at_epoch(m.epoch);
        break;
      case ControlKind::EndPolicy: return;
      case ControlKind::Abort: throw common::RunError("rank 0 stopped the run: " + m.reason);
    }
  }
}

}  // namespace env
