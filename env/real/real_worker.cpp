#include "env/real/real_worker.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "common/errors.hpp"
#include "env/sim/averaging_round.hpp"
#include "env/sim/simulation.hpp"
#include "env/train/device.hpp"

namespace env {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

}  // namespace

RealWorker::RealWorker(const RealWorkerSpec& spec, std::shared_ptr<const DatasetPair> data, Communicator& comm)
    : spec_(spec), data_(std::move(data)), comm_(comm), order_(data_ ? data_->train.size() : 0, derive_seed(spec.seed, 2), true) {
  if (!data_) throw std::invalid_argument("a real run needs a dataset");
  prepare_device(spec_.device, spec_.training.tf32);
  data_ = place_on(data_, spec_.device);
  if (spec_.training.timing_only) throw std::invalid_argument("a real run trains for real: training.timing_only must be false");
  if (spec_.cluster.num_workers() != comm_.world_size())
    throw std::invalid_argument("real run: the cluster lists " + std::to_string(spec_.cluster.num_workers()) + " workers for " +
                                std::to_string(comm_.world_size()) + " ranks");
  const auto& images = data_->train.images;
  // Seeds as the simulator's ReplicaSet does, so rank r starts from the simulator's replica r.
  replicas_ = std::make_unique<ReplicaSet>(spec_.training.model, std::vector<std::int64_t>{images.size(1), images.size(2), images.size(3)},
                                           data_->train.num_classes, 1, spec_.training.optimizer, spec_.seed, spec_.device);
}

std::vector<torch::Tensor> RealWorker::state() {
  Classifier& model = replicas_->model(0);
  std::vector<torch::Tensor> out = model.parameters();
  for (const auto& b : model.buffers())
    if (b.is_floating_point()) out.push_back(b);
  return out;
}

double RealWorker::epoch_progress() const {
  if (!in_epoch_ || order_.samples() == 0) return 0.0;
  return static_cast<double>(order_.consumed()) / static_cast<double>(order_.samples());
}

void RealWorker::check(const RoundPlan& plan) const { validate_plan(plan, spec_.cluster, in_epoch_, epoch_aggregation_); }

void RealWorker::start_at_epoch(int epoch) {
  epoch_ = epoch;
  in_epoch_ = false;
}

void RealWorker::broadcast_model_from(int root) {
  for (auto& t : state()) {
    torch::NoGradGuard no_grad;
    comm_.broadcast(t, root, "resume: weights from rank " + std::to_string(root));
  }
}

// The same epoch set-up as Simulation::begin_epoch (round_rules.hpp), so one seed gives the
// simulator's data split and learning rate.
void RealWorker::begin_epoch(const RoundPlan& plan) {
  epoch_aggregation_ = plan.aggregation;
  open_epoch(order_, epoch_, plan);
  in_epoch_ = true;
  if (spec_.training.lr_schedule == LrSchedule::Cosine)
    replicas_->set_learning_rate(cosine_learning_rate(spec_.training.optimizer.lr, epoch_, spec_.training.planned_epochs));
}

double RealWorker::timed(const std::function<void()>& step, double clock_ms) {
  const auto start = Clock::now();
  step();
  synchronize(spec_.device);  // a GPU's queued kernels are part of the step
  const double measured = ms_since(start);
  double ms = measured;
  for (const auto& p : spec_.perturbations)
    if (p.active_at(clock_ms / 1000.0)) ms = ms * p.slowdown + p.add_ms;
  // A slowdown below 1 cannot make this machine faster; only the extra time is simulated.
  if (ms > measured) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms - measured));
  return std::max(ms, measured);
}

RealRoundStats RealWorker::run_round(std::int64_t round, const RoundPlan& plan, double clock_ms) {
  check(plan);
  if (!in_epoch_) begin_epoch(plan);
  round_ = round;
  round_start_ = Clock::now();
  round_clock_ms_ = clock_ms;
  RealRoundStats stats;
  stats.round = round;
  if (plan.aggregation == Aggregation::GradientAllReduce)
    run_gradient_round(plan, stats);
  else
    run_average_round(plan, stats);
  if (order_.exhausted()) {
    stats.epoch_end = true;
    in_epoch_ = false;
    ++epoch_;
  }
  return stats;
}

// The simulator's split of the global batch (stream_batch_sizes); LBB Sec. 3.2.4's weighted gradient.
void RealWorker::run_gradient_round(const RoundPlan& plan, RealRoundStats& stats) {
  const std::size_t n = plan.workers.size();
  const std::vector<std::int64_t> sizes = stream_batch_sizes(plan.workers, order_.stream_remaining());
  const std::int64_t available = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  if (available == 0) throw common::PlanError("the plan processes no samples");

  const auto me = static_cast<std::size_t>(comm_.rank());
  IndexSpan mine;
  for (std::size_t i = 0; i < n; ++i) {
    const IndexSpan span = order_.take_stream(sizes[i]);
    if (i == me) mine = span;
  }
  Classifier& model = replicas_->model(0);
  auto& optimizer = replicas_->optimizer(0);
  optimizer.zero_grad();
  if (mine.size > 0) {
    const auto batch = gather_batch(data_->train, mine);
    const torch::Tensor& x = batch.first;
    const torch::Tensor& y = batch.second;
    const double weight = static_cast<double>(mine.size) / static_cast<double>(available);  // B_i / B
    stats.worker.compute_ms = timed(
        [&] {
          auto loss = torch::nn::functional::cross_entropy(model.forward(x), y);
          (loss * weight).backward();
          stats.loss_sum = loss.item<double>() * weight;
        },
        round_clock_ms_);
    stats.worker.batch_size = static_cast<int>(mine.size);
    stats.worker.local_steps = 1;
    stats.worker.samples = static_cast<int>(mine.size);
  }
  stats.loss_count = 1;
  // The sum of the weighted gradients, which every rank then applies (ReplicaSet::gradient_step).
  std::vector<torch::Tensor> grads;
  for (auto& p : model.parameters()) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  const auto start = Clock::now();
  comm_.all_reduce_sum(grads, "gradient all-reduce of round " + std::to_string(round_));
  stats.sync_ms += ms_since(start);
  // The update counts as compute, as it does in a local step of a model-averaging round
  // (ReplicaSet::local_step): one step costs the same in both, and one time model per worker
  // (what calibrate fits, and what the simulator charges) describes both kinds of round.
  const double update_ms = timed([&] { optimizer.step(); }, round_clock_ms_);
  if (mine.size > 0) stats.worker.compute_ms += update_ms;
}

// The round describe_averaging_round gives (as Simulation::run_average_round runs it), with real
// steps on this rank's shard only and every average an all-reduce in which each rank adds its
// weighted model (zeros outside the average).
void RealWorker::run_average_round(const RoundPlan& plan, RealRoundStats& stats) {
  const std::size_t n = plan.workers.size();
  const int me = comm_.rank();
  rebalance_shards(order_, plan, spec_.training.shards);  // every rank alike
  const AveragingRound round = describe_averaging_round(plan, spec_.cluster, order_);
  if (round.took_part.empty()) throw common::PlanError("the plan processes no samples: the workers with data left in this epoch have batch 0 or no local steps");
  const GlobalAverage& global = round.global;
  // FedNova and the outer optimizer start from the global model as the round starts (x_t).
  std::vector<torch::Tensor> round_start;
  if (global.needs_round_start()) {
    torch::NoGradGuard no_grad;
    for (const auto& p : replicas_->model(0).parameters()) round_start.push_back(p.clone());
    if (global.fednova) replicas_->reset_momentum();  // a_i counts the round's steps from a fresh buffer
  }
  for (const AveragingChunk& chunk : round.chunks) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::int64_t s = chunk.first; s < std::min(chunk.end, round.steps[i]); ++s) {
        const IndexSpan batch = order_.take_shard(static_cast<int>(i), plan.workers[i].batch_size);
        if (static_cast<int>(i) != me) continue;  // every rank advances every shard's cursor alike
        const auto xy = gather_batch(data_->train, batch);
        const torch::Tensor& x = xy.first;
        const torch::Tensor& y = xy.second;
        const double now = round_clock_ms_ + ms_since(round_start_);
        stats.worker.compute_ms += timed([&] { stats.loss_sum += replicas_->local_step(0, x, y); }, now);
        stats.worker.batch_size = std::max(stats.worker.batch_size, static_cast<int>(batch.size));
        stats.worker.samples += static_cast<int>(batch.size);
        ++stats.worker.local_steps;
        ++stats.loss_count;
      }
    // Every rank joins every server's all-reduce (a rank outside the server adds zeros): c10d
    // collectives are over the whole group, and this keeps one group for the run.
    for (const AverageGroup& server : chunk.server_averages) {
      const int id = spec_.cluster.workers[static_cast<std::size_t>(server.members[0])].server;
      average(server.weight_of(me), server.contains(me), "server " + std::to_string(id) + " average of round " + std::to_string(round_), stats);
    }
  }
  const std::string what = "model average of round " + std::to_string(round_);
  if (!global.needs_round_start()) {
    average(global.weight_of(me), true, what, stats);
    return;
  }
  // FedNova and the outer optimizer: each rank adds its term of the global model's sum
  // (global_update.hpp), the same sum the simulator computes in one process; buffers are averaged.
  const double rho = spec_.training.optimizer.momentum;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> mine = state();
  const std::size_t parameters = round_start.size();
  std::vector<torch::Tensor> sum =
      global_term(global, rho, me, round_start, std::vector<torch::Tensor>(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(parameters)));
  for (std::size_t k = parameters; k < mine.size(); ++k) sum.push_back(mine[k] * global.weight_of(me));
  const auto start = Clock::now();
  comm_.all_reduce_sum(sum, what);
  stats.sync_ms += ms_since(start);
  std::vector<torch::Tensor> next =
      global_from_sum(global, rho, round_start, std::vector<torch::Tensor>(sum.begin(), sum.begin() + static_cast<std::ptrdiff_t>(parameters)));
  if (global.outer) next = outer_.step(round_start, next, *global.outer);
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k].copy_(k < parameters ? next[k] : sum[k]);
}

void RealWorker::average(double my_weight, bool receive, const std::string& what, RealRoundStats& stats) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> mine = state();
  std::vector<torch::Tensor> sum;
  for (const auto& t : mine) sum.push_back(t * my_weight);  // 0 for a rank outside the average
  const auto start = Clock::now();
  comm_.all_reduce_sum(sum, what);
  stats.sync_ms += ms_since(start);
  if (!receive) return;
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k].copy_(sum[k]);
}

double RealWorker::probe_ms(int batch, double clock_ms) {
  if (batch <= 0) return 0.0;
  const std::int64_t n = data_->train.size();
  auto index = torch::arange(batch, torch::TensorOptions(torch::kInt64).device(spec_.device)).remainder(n);
  auto x = data_->train.images.index_select(0, index);
  auto y = data_->train.labels.index_select(0, index);
  Classifier& model = replicas_->model(0);
  // Probing must not train: buffers (BatchNorm statistics) and gradients are restored after.
  std::vector<torch::Tensor> buffers;
  for (const auto& b : model.buffers()) buffers.push_back(b.clone());
  const double ms = timed(
      [&] {
        auto loss = torch::nn::functional::cross_entropy(model.forward(x), y);
        loss.backward();
      },
      clock_ms);
  replicas_->optimizer(0).zero_grad();
  torch::NoGradGuard no_grad;
  auto live = model.buffers();
  for (std::size_t k = 0; k < live.size(); ++k) live[k].copy_(buffers[k]);
  return ms;
}

}  // namespace env
