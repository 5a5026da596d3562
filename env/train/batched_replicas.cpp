#include "env/train/batched_replicas.hpp"

#include <algorithm>
#include <iostream>
#include <mutex>

#include "env/sim/cluster.hpp"
#include "env/train/replicas.hpp"
#include "env/train/stacked_models.hpp"

namespace env {
namespace {

// A mask [n] reshaped to broadcast against a stacked tensor [n, ...].
torch::Tensor per_replica(const torch::Tensor& mask, const torch::Tensor& stacked) {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(stacked.dim()), 1);
  shape[0] = stacked.size(0);
  return mask.view(shape);
}

}  // namespace

BatchedReplicaSet::BatchedReplicaSet(const ModelSpec& model, const std::vector<std::int64_t>& input_shape, int classes,
                                     int num_workers, const OptimizerSpec& optimizer, std::uint64_t seed, torch::Device device)
    : kind_(model.kind), num_workers_(num_workers), optimizer_(optimizer), device_(device) {
  if (!can_stack(model.kind)) throw std::invalid_argument(std::string("the ") + model_name(model.kind) + " model cannot be stacked");
  if (num_workers < 1) throw std::invalid_argument("BatchedReplicaSet needs at least one worker");
  // ReplicaSet's draws: replica 0 is the first model made after seeding, and the generator is
  // left where N models leave it.
  torch::manual_seed(derive_seed(seed, 11));
  eval_model_ = make_model(model, input_shape, classes);
  for (int i = 1; i < num_workers; ++i) make_model(model, input_shape, classes);
  if (!device_.is_cpu()) eval_model_->to(device_);
  torch::NoGradGuard no_grad;
  for (const auto& p : eval_model_->parameters()) {
    params_.push_back(torch::stack(std::vector<torch::Tensor>(static_cast<std::size_t>(num_workers), p.detach())).requires_grad_(true));
    momentum_.push_back(torch::zeros_like(params_.back()));
  }
  parameter_bytes_ = env::parameter_bytes(*eval_model_);
}

torch::Tensor BatchedReplicaSet::forward_backward(const std::vector<torch::Tensor>& params, const torch::Tensor& inputs,
                                                  const torch::Tensor& targets, const torch::Tensor& sample_weights) {
  for (auto& p : params_) p.mutable_grad() = torch::Tensor();
  const torch::Tensor logits = stacked_forward(kind_, params, inputs);
  const auto n = logits.size(0), batch = logits.size(1);
  const torch::Tensor losses = torch::nn::functional::cross_entropy(
      logits.reshape({n * batch, logits.size(2)}), targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  // Padding carries weight 0: its loss and its gradient are exactly zero.
  const torch::Tensor weighted = losses * sample_weights;
  weighted.sum().backward();
  return weighted.detach().view({n, batch}).sum(1);
}

void BatchedReplicaSet::sgd_update(const std::vector<bool>& active) {
  torch::NoGradGuard no_grad;
  const bool everyone = std::all_of(active.begin(), active.end(), [](bool a) { return a; });
  torch::Tensor mask;
  if (!everyone) {
    std::vector<std::uint8_t> flags(active.begin(), active.end());
    mask = torch::tensor(flags, torch::kBool).to(device_);
  }
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const torch::Tensor grad = params_[k].grad();
    if (!grad.defined()) continue;
    // torch::optim::SGD: d = g + wd p; buf = momentum buf + d (buf = d at the first step, which
    // a zero buffer gives exactly); p = p - lr buf.
    const torch::Tensor d = optimizer_.weight_decay != 0 ? grad.add(params_[k], optimizer_.weight_decay) : grad;
    if (everyone) {
      momentum_[k].mul_(optimizer_.momentum).add_(d);
      params_[k].add_(momentum_[k], -optimizer_.lr);
      continue;
    }
    const torch::Tensor m = per_replica(mask, params_[k]);
    momentum_[k].copy_(torch::where(m, momentum_[k].mul(optimizer_.momentum).add_(d), momentum_[k]));
    params_[k].copy_(torch::where(m, params_[k].add(momentum_[k], -optimizer_.lr), params_[k]));
  }
}

double BatchedReplicaSet::gradient_step(const Dataset& train, const std::vector<IndexSpan>& batches) {
  std::vector<std::int64_t> index;
  for (const auto& span : batches) index.insert(index.end(), span.data, span.data + span.size);
  if (index.empty()) return 0.0;
  const auto total = static_cast<std::int64_t>(index.size());
  const torch::Tensor rows = torch::tensor(index, torch::kInt64).to(device_);
  const torch::Tensor inputs = train.images.index_select(0, rows).unsqueeze(0);
  std::vector<torch::Tensor> first;
  for (const auto& p : params_) first.push_back(p.narrow(0, 0, 1));
  const torch::Tensor weights = torch::full({total}, 1.0 / static_cast<double>(total), inputs.options());
  const double loss = forward_backward(first, inputs, train.labels.index_select(0, rows), weights).item<double>();
  std::vector<bool> active(static_cast<std::size_t>(num_workers_), false);
  active[0] = true;  // the shared model is replica 0 (ReplicaSet::gradient_step)
  sgd_update(active);
  others_stale_ = num_workers_ > 1;
  return loss;
}

std::vector<double> BatchedReplicaSet::local_steps(const Dataset& train, const std::vector<std::vector<IndexSpan>>& batches) {
  if (others_stale_) make_all_equal_to_first();
  const auto n = static_cast<std::size_t>(num_workers_);
  if (batches.size() != n) throw std::invalid_argument("local_steps: one list of batches per worker");
  std::size_t slots = 0;
  for (const auto& b : batches) slots = std::max(slots, b.size());
  std::vector<std::vector<double>> losses(n);
  for (std::size_t s = 0; s < slots; ++s) {
    std::vector<bool> active(n, false);
    std::int64_t widest = 1;
    for (std::size_t i = 0; i < n; ++i)
      if (s < batches[i].size() && batches[i][s].size > 0) {
        active[i] = true;
        widest = std::max(widest, batches[i][s].size);
      }
    // Worker i's samples fill row i; the rest of the row repeats a valid sample with weight 0.
    std::vector<std::int64_t> index(n * static_cast<std::size_t>(widest), 0);
    std::vector<float> weight(index.size(), 0.0f);
    for (std::size_t i = 0; i < n; ++i) {
      if (!active[i]) continue;
      const IndexSpan span = batches[i][s];
      const std::size_t row = i * static_cast<std::size_t>(widest);
      std::copy(span.data, span.data + span.size, index.begin() + static_cast<std::ptrdiff_t>(row));
      std::fill(index.begin() + static_cast<std::ptrdiff_t>(row) + span.size,
                index.begin() + static_cast<std::ptrdiff_t>(row) + widest, span.data[0]);
      std::fill(weight.begin() + static_cast<std::ptrdiff_t>(row), weight.begin() + static_cast<std::ptrdiff_t>(row) + span.size,
                1.0f / static_cast<float>(span.size));
    }
    const torch::Tensor rows = torch::tensor(index, torch::kInt64).to(device_);
    const torch::Tensor inputs = train.images.index_select(0, rows);
    std::vector<std::int64_t> shape{static_cast<std::int64_t>(n), widest};
    for (std::int64_t d = 1; d < inputs.dim(); ++d) shape.push_back(inputs.size(d));
    const torch::Tensor step_losses =
        forward_backward(params_, inputs.view(shape), train.labels.index_select(0, rows), torch::tensor(weight).to(device_));
    sgd_update(active);
    const torch::Tensor on_cpu = step_losses.to(torch::kCPU, torch::kDouble);
    const double* values = on_cpu.data_ptr<double>();
    for (std::size_t i = 0; i < n; ++i)
      if (active[i]) losses[i].push_back(values[i]);
  }
  std::vector<double> out;
  for (const auto& l : losses) out.insert(out.end(), l.begin(), l.end());
  return out;
}

void BatchedReplicaSet::average(const std::vector<int>& members, const std::vector<double>& weights, const std::vector<int>& receivers) {
  if (members.empty()) return;
  if (others_stale_) make_all_equal_to_first();
  torch::NoGradGuard no_grad;
  const torch::Tensor who = torch::tensor(std::vector<std::int64_t>(members.begin(), members.end()), torch::kInt64).to(device_);
  const torch::Tensor w = torch::tensor(weights, torch::kDouble).to(device_, params_[0].scalar_type());
  const bool everyone = static_cast<int>(receivers.size()) == num_workers_;
  const torch::Tensor to =
      torch::tensor(std::vector<std::int64_t>(receivers.begin(), receivers.end()), torch::kInt64).to(device_);
  for (auto& p : params_) {
    // One weighted reduction over the replica dimension, then one broadcast write.
    const torch::Tensor chosen = p.index_select(0, who);
    const torch::Tensor mean = (chosen * per_replica(w, chosen)).sum(0, /*keepdim=*/true);
    if (everyone) {
      p.copy_(mean);
    } else {
      auto shape = p.sizes().vec();
      shape[0] = static_cast<std::int64_t>(receivers.size());
      p.index_copy_(0, to, mean.expand(shape).contiguous());
    }
  }
}

void BatchedReplicaSet::snapshot_global() {
  if (others_stale_) make_all_equal_to_first();
  torch::NoGradGuard no_grad;
  round_start_.clear();
  for (const auto& p : params_) round_start_.push_back(p[0].clone());
}

void BatchedReplicaSet::global_update(const std::vector<int>& members, const std::vector<double>& weights, const std::vector<int>& steps,
                                      bool fednova, const std::optional<OuterOptimizer>& outer) {
  if (members.empty()) return;
  if (round_start_.size() != params_.size()) throw std::logic_error("global_update without snapshot_global at the round's start");
  torch::NoGradGuard no_grad;
  std::vector<std::vector<torch::Tensor>> workers;
  std::vector<double> a;
  for (std::size_t m = 0; m < members.size(); ++m) {
    std::vector<torch::Tensor> views;
    for (const auto& p : params_) views.push_back(p[members[m]]);
    workers.push_back(std::move(views));
    a.push_back(fednova_effective_steps(steps[m], optimizer_.momentum));
  }
  std::vector<torch::Tensor> next = combine(round_start_, workers, weights, fednova ? &a : nullptr);
  if (outer) next = outer_.step(round_start_, next, *outer);
  for (std::size_t k = 0; k < params_.size(); ++k) params_[k].copy_(next[k].unsqueeze(0));
}

EvalResult BatchedReplicaSet::evaluate(const Dataset& test) {
  if (others_stale_) make_all_equal_to_first();
  {
    torch::NoGradGuard no_grad;
    auto target = eval_model_->parameters();
    for (std::size_t k = 0; k < params_.size(); ++k) target[k].copy_(params_[k][0]);
  }
  return evaluate_classifier(*eval_model_, test, device_);
}

std::vector<torch::Tensor> BatchedReplicaSet::state(int worker) {
  if (others_stale_) make_all_equal_to_first();
  std::vector<torch::Tensor> out;
  for (const auto& p : params_) out.push_back(p[worker].detach().clone());
  return out;
}

void BatchedReplicaSet::make_all_equal_to_first() {
  torch::NoGradGuard no_grad;
  for (auto& p : params_) p.narrow(0, 1, num_workers_ - 1).copy_(p.narrow(0, 0, 1));
  others_stale_ = false;
}

std::unique_ptr<WorkerReplicas> make_replicas(ReplicaMode mode, const ModelSpec& model, const std::vector<std::int64_t>& input_shape,
                                              int classes, int num_workers, const OptimizerSpec& optimizer, std::uint64_t seed,
                                              torch::Device device) {
  if (mode == ReplicaMode::Batched && can_stack(model.kind))
    return std::make_unique<BatchedReplicaSet>(model, input_shape, classes, num_workers, optimizer, seed, device);
  if (mode == ReplicaMode::Batched) {
    static std::once_flag notice;  // once per process: the RL environment builds one cluster per episode
    std::call_once(notice, [&] {
      std::cerr << "note: the " << model_name(model.kind)
                << " model has batch norm and does not stack; its replicas train one after another (runtime.replicas: sequential)\n";
    });
  }
  return std::make_unique<ReplicaSet>(model, input_shape, classes, num_workers, optimizer, seed, device);
}

}  // namespace env
