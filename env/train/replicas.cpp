#include "env/train/replicas.hpp"

#include "env/sim/cluster.hpp"
#include "env/train/device.hpp"

namespace env {
namespace {

std::vector<torch::Tensor> state_tensors(Classifier& model) {
  std::vector<torch::Tensor> out = model.parameters();
  for (const auto& b : model.buffers())
    if (b.is_floating_point()) out.push_back(b);
  return out;
}

}  // namespace

ReplicaSet::ReplicaSet(const ModelSpec& model, const std::vector<std::int64_t>& input_shape, int classes,
                       int num_workers, const OptimizerSpec& optimizer, std::uint64_t seed, torch::Device device)
    : device_(device) {
  torch::manual_seed(derive_seed(seed, 11));  // the model's initialization comes from the config seed
  for (int i = 0; i < num_workers; ++i) {
    models_.push_back(make_model(model, input_shape, classes));
    if (!device_.is_cpu()) models_.back()->to(device_);  // initialized on the CPU: the same weights as a CPU run
    params_.push_back(state_tensors(*models_.back()));
    optimizers_.push_back(std::make_unique<torch::optim::SGD>(
        models_.back()->parameters(),
        torch::optim::SGDOptions(optimizer.lr).momentum(optimizer.momentum).weight_decay(optimizer.weight_decay)));
  }
  torch::NoGradGuard no_grad;
  for (int i = 1; i < num_workers; ++i)
    for (std::size_t k = 0; k < params_[0].size(); ++k) params_[i][k].copy_(params_[0][k]);
  parameter_bytes_ = env::parameter_bytes(*models_[0]);
  momentum_ = optimizer.momentum;
  parameter_count_ = models_[0]->parameters().size();
}

void ReplicaSet::snapshot_global() {
  if (others_stale_) make_all_equal_to_first();
  torch::NoGradGuard no_grad;
  round_start_.clear();
  for (std::size_t k = 0; k < parameter_count_; ++k) round_start_.push_back(params_[0][k].clone());
}

void ReplicaSet::reset_momentum() {
  // torch::optim::SGD starts a parameter's buffer at its first step's d when it has no state.
  for (auto& optimizer : optimizers_) optimizer->state().clear();
}

void ReplicaSet::global_update(const GlobalAverage& global) {
  const std::vector<int>& members = global.members;
  const std::vector<double>& weights = global.weights;
  if (members.empty()) return;
  if (round_start_.size() != parameter_count_) throw std::logic_error("global_update without snapshot_global at the round's start");
  torch::NoGradGuard no_grad;
  std::vector<std::vector<torch::Tensor>> workers;
  for (int m : members) {
    const auto& all = params_[static_cast<std::size_t>(m)];
    workers.emplace_back(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(parameter_count_));
  }
  std::vector<torch::Tensor> next = combine(global, momentum_, round_start_, workers);
  if (global.outer) next = outer_.step(round_start_, next, *global.outer);
  // Buffers: the plain weighted mean, computed before any replica is overwritten.
  std::vector<torch::Tensor> buffers;
  for (std::size_t k = parameter_count_; k < params_[0].size(); ++k) {
    torch::Tensor mean = params_[static_cast<std::size_t>(members[0])][k] * weights[0];
    for (std::size_t m = 1; m < members.size(); ++m) mean.add_(params_[static_cast<std::size_t>(members[m])][k], weights[m]);
    buffers.push_back(mean);
  }
  for (auto& replica : params_) {
    for (std::size_t k = 0; k < parameter_count_; ++k) replica[k].copy_(next[k]);
    for (std::size_t k = parameter_count_; k < replica.size(); ++k) replica[k].copy_(buffers[k - parameter_count_]);
  }
}

double ReplicaSet::gradient_step(const std::vector<torch::Tensor>& inputs, const std::vector<torch::Tensor>& targets) {
  std::int64_t total = 0;
  for (const auto& t : targets) total += t.size(0);
  if (total == 0) return 0.0;
  Classifier& shared = *models_[0];
  optimizers_[0]->zero_grad();
  double loss_sum = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::int64_t b = targets[i].size(0);
    if (b == 0) continue;
    const double weight = static_cast<double>(b) / static_cast<double>(total);  // B_i / B
    auto loss = torch::nn::functional::cross_entropy(shared.forward(inputs[i]), targets[i]);
    (loss * weight).backward();
    loss_sum += loss.item<double>() * weight;
  }
  optimizers_[0]->step();
  others_stale_ = models_.size() > 1;
  return loss_sum;
}

double ReplicaSet::local_step(int worker, const torch::Tensor& input, const torch::Tensor& target) {
  if (others_stale_) make_all_equal_to_first();
  const auto i = static_cast<std::size_t>(worker);
  optimizers_[i]->zero_grad();
  auto loss = torch::nn::functional::cross_entropy(models_[i]->forward(input), target);
  loss.backward();
  optimizers_[i]->step();
  return loss.item<double>();
}

void ReplicaSet::average(const std::vector<int>& members, const std::vector<double>& weights,
                         const std::vector<int>& receivers) {
  if (members.empty()) return;
  if (others_stale_) make_all_equal_to_first();
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < params_[0].size(); ++k) {
    torch::Tensor mean = params_[static_cast<std::size_t>(members[0])][k] * weights[0];
    for (std::size_t m = 1; m < members.size(); ++m)
      mean.add_(params_[static_cast<std::size_t>(members[m])][k], weights[m]);
    for (int r : receivers) params_[static_cast<std::size_t>(r)][k].copy_(mean);
  }
}

void ReplicaSet::make_all_equal_to_first() {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 1; i < params_.size(); ++i)
    for (std::size_t k = 0; k < params_[0].size(); ++k) params_[i][k].copy_(params_[0][k]);
  others_stale_ = false;
}

void ReplicaSet::set_learning_rate(double lr) {
  for (auto& opt : optimizers_)
    for (auto& group : opt->param_groups()) static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
}

std::pair<torch::Tensor, torch::Tensor> gather_batch(const Dataset& data, IndexSpan span) {
  // The span points into EpochData's order, which outlives this call; from_blob does not copy.
  auto index = torch::from_blob(const_cast<std::int64_t*>(span.data), {span.size}, torch::kInt64);
  index = to_device(index, data.images.device());
  return {data.images.index_select(0, index), data.labels.index_select(0, index)};
}

double ReplicaSet::gradient_step(const Dataset& train, const std::vector<IndexSpan>& batches) {
  std::vector<torch::Tensor> inputs, targets;
  for (const auto& span : batches) {
    auto [x, y] = gather_batch(train, span);
    inputs.push_back(x);
    targets.push_back(y);
  }
  return gradient_step(inputs, targets);
}

std::vector<double> ReplicaSet::local_steps(const Dataset& train, const std::vector<std::vector<IndexSpan>>& batches) {
  std::vector<double> losses;
  for (std::size_t i = 0; i < batches.size(); ++i)
    for (const auto& span : batches[i]) {
      auto [x, y] = gather_batch(train, span);
      losses.push_back(local_step(static_cast<int>(i), x, y));
    }
  return losses;
}

std::vector<torch::Tensor> ReplicaSet::state(int worker) {
  if (others_stale_) make_all_equal_to_first();
  std::vector<torch::Tensor> out;
  for (const auto& t : params_[static_cast<std::size_t>(worker)]) out.push_back(t.detach().clone());
  return out;
}

EvalResult ReplicaSet::evaluate(const Dataset& test) { return evaluate_classifier(*models_[0], test, device_); }

EvalResult evaluate_classifier(Classifier& model, const Dataset& test, torch::Device device) {
  torch::NoGradGuard no_grad;
  model.eval();
  double loss_sum = 0;
  std::int64_t correct = 0;
  const std::int64_t n = test.size(), chunk = 2000;
  for (std::int64_t start = 0; start < n; start += chunk) {
    const std::int64_t end = std::min(n, start + chunk);
    auto logits = model.forward(test.images.slice(0, start, end).to(device));
    auto labels = test.labels.slice(0, start, end).to(device);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct += logits.argmax(1).eq(labels).sum().item<std::int64_t>();
  }
  model.train();
  return {static_cast<double>(correct) / static_cast<double>(n), loss_sum / static_cast<double>(n)};
}

}  // namespace env
