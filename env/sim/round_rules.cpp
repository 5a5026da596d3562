#include "env/sim/round_rules.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/errors.hpp"

namespace env {

void validate_plan(const RoundPlan& plan, const ClusterSpec& cluster, bool in_epoch, Aggregation epoch_aggregation) {
  const int n = cluster.num_workers();
  if (static_cast<int>(plan.workers.size()) != n)
    throw common::PlanError("plan has " + std::to_string(plan.workers.size()) + " workers, the cluster " + std::to_string(n));
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const auto& w = plan.workers[static_cast<std::size_t>(i)];
    const auto& spec = cluster.workers[static_cast<std::size_t>(i)];
    if (w.batch_size < 0 || w.batch_size > spec.max_batch)
      throw common::PlanError("worker " + spec.name + ": batch " + std::to_string(w.batch_size) + " outside [0, max_batch " +
                              std::to_string(spec.max_batch) + "]");
    if (plan.aggregation == Aggregation::ModelAverage && w.local_steps < 0)
      throw common::PlanError("worker " + spec.name + ": negative local steps");
    any = any || (w.batch_size > 0 && (plan.aggregation == Aggregation::GradientAllReduce || w.local_steps > 0));
  }
  if (!any) throw common::PlanError("plan gives no worker any work");
  if (in_epoch && plan.aggregation != epoch_aggregation) throw common::PlanError("aggregation changed inside an epoch");
}

std::vector<double> epoch_data_shares(const RoundPlan& plan) {
  std::vector<double> shares = plan.data_shares;
  if (shares.empty())
    for (const auto& w : plan.workers)
      shares.push_back(static_cast<double>(w.batch_size) * (w.local_steps == kUntilShardEnd ? 1.0 : w.local_steps));
  if (shares.size() != plan.workers.size())
    throw common::PlanError("data_shares has " + std::to_string(shares.size()) + " entries for " + std::to_string(plan.workers.size()) +
                            " workers");
  for (std::size_t i = 0; i < shares.size(); ++i)
    if (plan.workers[i].batch_size == 0) shares[i] = 0;  // out of the epoch
  return shares;
}

void open_epoch(EpochData& data, int epoch, const RoundPlan& plan) {
  if (plan.aggregation == Aggregation::GradientAllReduce) {
    data.begin_stream(epoch);
    return;
  }
  const std::vector<double> shares = epoch_data_shares(plan);
  try {
    data.begin_shards(epoch, shares);
  } catch (const std::invalid_argument& e) {
    throw common::PlanError(e.what());
  }
}

bool rebalance_shards(EpochData& data, const RoundPlan& plan, ShardRule rule) {
  if (rule == ShardRule::Epoch || plan.aggregation != Aggregation::ModelAverage || !data.sharded()) return false;
  const std::vector<double> shares = epoch_data_shares(plan);
  const std::size_t n = plan.workers.size();
  std::vector<double> per_round(n, 0.0);  // samples each worker takes in a full round (0: sits out, or one-shot)
  for (std::size_t i = 0; i < n; ++i) {
    const WorkerPlan& w = plan.workers[i];
    if (w.local_steps != kUntilShardEnd && w.batch_size > 0) per_round[i] = static_cast<double>(w.local_steps) * w.batch_size;
  }
  // The fastest short worker's round, and the smallest round of a worker holding more than its own.
  double short_round = 0, holder_round = -1;
  for (std::size_t i = 0; i < n; ++i) {
    if (plan.workers[i].local_steps == kUntilShardEnd) continue;  // one-shot: its round is whatever it holds
    const auto left = static_cast<double>(data.shard_remaining(static_cast<int>(i)));
    if (per_round[i] > 0 && shares[i] > 0 && left < per_round[i]) short_round = std::max(short_round, per_round[i]);
    if (left > per_round[i]) holder_round = holder_round < 0 ? per_round[i] : std::min(holder_round, per_round[i]);
  }
  if (short_round <= 0 || holder_round < 0) return false;
  if (rule == ShardRule::Steal && !(holder_round < short_round)) return false;  // only towards faster workers
  try {
    data.reshare(rule == ShardRule::Steal ? per_round : shares);
  } catch (const std::invalid_argument& e) {
    throw common::PlanError(e.what());
  }
  return true;
}

std::vector<std::int64_t> stream_batch_sizes(const std::vector<WorkerPlan>& workers, std::int64_t available) {
  const std::size_t n = workers.size();
  std::int64_t total = 0;
  for (const auto& w : workers) total += w.batch_size;
  std::vector<std::int64_t> sizes(n, 0);
  if (total <= 0) return sizes;
  available = std::min(total, available);
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sizes[i] = workers[i].batch_size * available / total;
    assigned += sizes[i];
  }
  for (std::size_t i = 0; assigned < available; i = (i + 1) % n)
    if (workers[i].batch_size > sizes[i]) ++sizes[i], ++assigned;
  return sizes;
}

double straggler_effect_of(const std::vector<WorkerRoundStats>& workers) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0, sum = 0;
  int n = 0;
  for (const auto& w : workers) {
    if (w.local_steps == 0) continue;
    lo = std::min(lo, w.compute_ms);
    hi = std::max(hi, w.compute_ms);
    sum += w.compute_ms;
    ++n;
  }
  if (n < 2 || sum <= 0) return 0.0;
  return (hi - lo) / (sum / n);
}

double cosine_learning_rate(double lr, int epoch, int planned_epochs) {
  const double progress = std::min(1.0, static_cast<double>(epoch) / std::max(1, planned_epochs));
  return lr * 0.5 * (1.0 + std::cos(M_PI * progress));
}

ClusterView make_cluster_view(const ClusterSpec& cluster, const NetworkSpec& network, int global_batch, std::int64_t train_samples,
                              double parameter_bytes) {
  ClusterView v;
  v.num_workers = cluster.num_workers();
  v.global_batch = global_batch;
  v.train_samples = train_samples;
  v.num_servers = cluster.num_servers();
  v.parameter_bytes = parameter_bytes;
  for (const auto& w : cluster.workers) {
    v.worker_names.push_back(w.name);
    v.max_batch.push_back(w.max_batch);
    v.server_of.push_back(w.server);
  }
  const LinkSpec link = cluster.num_servers() > 1 ? network.inter_server : network.intra_server;
  v.allreduce_ms = [link, parameter_bytes](int participants) { return ring_allreduce_ms(participants, parameter_bytes, link); };
  return v;
}

void EpochTally::start(double clock_ms) {
  std::fill(busy_.begin(), busy_.end(), 0.0);
  std::fill(idle_.begin(), idle_.end(), 0.0);
  std::fill(steps_.begin(), steps_.end(), 0);
  start_ms_ = clock_ms;
  straggler_sum_ = loss_sum_ = 0;
  rounds_ = loss_count_ = 0;
}

void EpochTally::add_round(const RoundReport& report) {
  for (std::size_t i = 0; i < report.workers.size(); ++i) {
    busy_[i] += report.workers[i].compute_ms;
    idle_[i] += report.workers[i].idle_ms;
    steps_[i] += report.workers[i].local_steps;
  }
  straggler_sum_ += report.straggler_effect;
  ++rounds_;
}

void EpochTally::add_loss(double loss_sum, std::int64_t count) {
  loss_sum_ += loss_sum;
  loss_count_ += count;
}

EpochReport EpochTally::finish(int epoch, double clock_ms) const {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  EpochReport r;
  r.epoch = epoch;
  r.rounds = rounds_;
  r.clock_ms = clock_ms;
  r.epoch_ms = clock_ms - start_ms_;
  r.accuracy = r.loss = nan;
  r.train_loss = loss_count_ > 0 ? loss_sum_ / static_cast<double>(loss_count_) : nan;
  r.mean_straggler_effect = rounds_ > 0 ? straggler_sum_ / static_cast<double>(rounds_) : 0.0;
  const double busy = std::accumulate(busy_.begin(), busy_.end(), 0.0);
  r.utilization = r.epoch_ms > 0 ? busy / (static_cast<double>(busy_.size()) * r.epoch_ms) : 0.0;
  r.worker_busy_ms = busy_;
  r.worker_idle_ms = idle_;
  r.worker_steps = steps_;
  return r;
}

}  // namespace env
