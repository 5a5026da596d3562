#include "env/train/batched_replicas.hpp"

#include <malloc.h>

#include <algorithm>
#include <iostream>
#include <mutex>

#include "env/sim/cluster.hpp"
#include "env/train/device.hpp"
#include "env/train/replicas.hpp"
#include "env/train/stacked_mlp.hpp"
#include "env/train/stacked_models.hpp"

namespace env {
namespace {

// A mask [n] reshaped to broadcast against a stacked tensor [n, ...].
torch::Tensor per_replica(const torch::Tensor& mask, const torch::Tensor& stacked) {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(stacked.dim()), 1);
  shape[0] = stacked.size(0);
  return mask.view(shape);
}

// The stacked tensors of a slot (gradients, temporaries) are megabytes and short-lived. glibc
// serves such blocks with mmap and trims the heap's top on free, so every slot page-faults its
// memory back in: measured, that was half of a 16-worker slot (784-64-10, 32 samples). Keeping
// blocks up to 256 MiB in the heap, untrimmed, removes it; set once per process.
void keep_large_blocks_in_heap() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
  });
}

// One replica's SGD step over `size` floats, compiled for AVX-512, AVX2 and plain x86-64 and
// picked once at run time: the build targets plain x86-64, and this pass over every parameter of
// every stepping replica is memory-bound work that the wider registers halve. (Not target_clones:
// its load-time resolver runs before a sanitizer's runtime is up, and crashed the TSan build.)
#define ORCHESTRA_SGD_MOMENTUM_BODY                  \
  for (std::int64_t i = 0; i < size; ++i) {          \
    m[i] = mu * m[i] + (g[i] + wd * p[i]);           \
    p[i] -= lr * m[i];                               \
  }
using SgdPass = void (*)(float* __restrict, float* __restrict, const float* __restrict, std::int64_t, float, float, float);
#if defined(__x86_64__)
__attribute__((target("avx512f"))) void sgd_pass_avx512(float* __restrict p, float* __restrict m, const float* __restrict g,
                                                        std::int64_t size, float lr, float mu, float wd) {
  ORCHESTRA_SGD_MOMENTUM_BODY
}
__attribute__((target("avx2"))) void sgd_pass_avx2(float* __restrict p, float* __restrict m, const float* __restrict g,
                                                   std::int64_t size, float lr, float mu, float wd) {
  ORCHESTRA_SGD_MOMENTUM_BODY
}
#endif
void sgd_pass_plain(float* __restrict p, float* __restrict m, const float* __restrict g, std::int64_t size, float lr, float mu,
                    float wd) {
  ORCHESTRA_SGD_MOMENTUM_BODY
}
#undef ORCHESTRA_SGD_MOMENTUM_BODY

SgdPass pick_sgd_pass() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return sgd_pass_avx512;
  if (__builtin_cpu_supports("avx2")) return sgd_pass_avx2;
#endif
  return sgd_pass_plain;
}

void sgd_momentum_pass(float* p, float* m, const float* g, std::int64_t size, float lr, float mu, float wd) {
  static const SgdPass pass = pick_sgd_pass();
  pass(p, m, g, size, lr, mu, wd);
}

// Off the CPU, a slot's losses stay on the device until the round is over: reading them after every
// slot would make the host wait for that slot's kernels before it can queue the next slot's.
struct SlotLosses {
  std::vector<std::int64_t> who;  // the slot's stepping workers, in order
  torch::Tensor losses;           // [who.size()], on the device
};

// pending[j]: job j's slots; losses[j][worker]: its steps' losses, appended in slot order.
void read_losses(const std::vector<std::vector<SlotLosses>>& pending, std::vector<std::vector<std::vector<double>>>& losses) {
  std::vector<torch::Tensor> parts;
  for (const auto& job : pending)
    for (const auto& p : job) parts.push_back(p.losses);
  if (parts.empty()) return;
  const torch::Tensor all = torch::cat(parts).to(torch::kCPU, torch::kDouble);  // one transfer for the round
  const double* value = all.data_ptr<double>();
  for (std::size_t j = 0; j < pending.size(); ++j)
    for (const auto& p : pending[j])
      for (const std::int64_t worker : p.who) losses[j][static_cast<std::size_t>(worker)].push_back(*value++);
}

}  // namespace

BatchedReplicaSet::BatchedReplicaSet(const ModelSpec& model, const std::vector<std::int64_t>& input_shape, int classes,
                                     int num_workers, const OptimizerSpec& optimizer, std::uint64_t seed, torch::Device device)
    : kind_(&model_kind(model.arch)), num_workers_(num_workers), optimizer_(optimizer), device_(device) {
  if (!kind_->stacked_forward) throw std::invalid_argument("the " + model.arch + " model cannot be stacked");
  if (num_workers < 1) throw std::invalid_argument("BatchedReplicaSet needs at least one worker");
  keep_large_blocks_in_heap();
  // ReplicaSet's draws: replica 0 is the first model made after seeding, and the generator is
  // left where N models leave it.
  torch::manual_seed(derive_seed(seed, 11));
  eval_model_ = make_model(model, input_shape, classes);
  for (int i = 1; i < num_workers; ++i) make_model(model, input_shape, classes);
  if (!device_.is_cpu()) eval_model_->to(device_);
  torch::NoGradGuard no_grad;
  for (const auto& p : eval_model_->parameters()) {
    const torch::Tensor replica = to_stacked_layout(p.detach());
    params_.push_back(torch::stack(std::vector<torch::Tensor>(static_cast<std::size_t>(num_workers), replica)));
    momentum_.push_back(torch::zeros_like(params_.back()));
  }
  parameter_bytes_ = env::parameter_bytes(*eval_model_);
}

std::vector<torch::Tensor> BatchedReplicaSet::rows_of(const std::vector<std::int64_t>& who) const {
  // Views when the replicas are one contiguous range (every worker, or a slot's leading ones),
  // otherwise copies: the forward only reads them, and sgd_update writes into params_ itself.
  const auto count = static_cast<std::int64_t>(who.size());
  const bool contiguous = who.back() - who.front() + 1 == count;
  std::vector<torch::Tensor> rows;
  if (contiguous) {
    for (const auto& p : params_) rows.push_back(p.narrow(0, who.front(), count));
    return rows;
  }
  const torch::Tensor chosen = to_device(torch::tensor(who, torch::kInt64), device_);
  for (const auto& p : params_) rows.push_back(p.index_select(0, chosen));
  return rows;
}

StackedGradients BatchedReplicaSet::gradients(const std::vector<torch::Tensor>& rows, const torch::Tensor& inputs,
                                              const torch::Tensor& targets, const torch::Tensor& sample_weights) {
  const auto n = inputs.size(0), batch = inputs.size(1);
  if (kind_->stacked_gradients) return kind_->stacked_gradients(rows, inputs, targets, sample_weights);  // written out (the MLP's)
  // Other stackable models through autograd, on leaves that share the rows' memory.
  std::vector<torch::Tensor> leaves;
  for (const auto& p : rows) leaves.push_back(p.detach().requires_grad_(true));
  const torch::Tensor logits = kind_->stacked_forward(leaves, inputs);
  const torch::Tensor losses = torch::nn::functional::cross_entropy(
      logits.reshape({n * batch, logits.size(2)}), targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  // Padding carries weight 0: its loss and its gradient are exactly zero.
  const torch::Tensor weighted = losses * sample_weights;
  weighted.sum().backward();
  StackedGradients out;
  out.losses = weighted.detach().view({n, batch}).sum(1);
  for (const auto& leaf : leaves) out.grads.push_back(leaf.grad());
  return out;
}

void BatchedReplicaSet::sgd_update(const std::vector<std::int64_t>& who, const std::vector<torch::Tensor>& grads) {
  torch::NoGradGuard no_grad;
  if (device_.is_cpu()) {
    // torch::optim::SGD's arithmetic (d = g + wd p; buf = mu buf + d, which a zero buffer makes d
    // at the first step; p = p - lr buf) in one pass per stepping replica instead of four passes
    // over the whole stack; the other replicas' memory is not touched at all.
    const auto wd = static_cast<float>(optimizer_.weight_decay), mu = static_cast<float>(optimizer_.momentum),
               lr = static_cast<float>(optimizer_.lr);
    for (std::size_t k = 0; k < params_.size(); ++k) {
      const torch::Tensor g = grads[k].contiguous();
      const std::int64_t size = params_[k].numel() / num_workers_;
      for (std::size_t r = 0; r < who.size(); ++r)
        sgd_momentum_pass(params_[k].data_ptr<float>() + who[r] * size, momentum_[k].data_ptr<float>() + who[r] * size,
                          g.data_ptr<float>() + static_cast<std::int64_t>(r) * size, size, lr, mu, wd);
    }
    return;
  }
  const auto count = static_cast<std::int64_t>(who.size());
  if (who.back() - who.front() + 1 == count) {
    // Other devices, a contiguous range of rows (the usual slot: every worker steps): the same
    // update on views of those rows, every parameter in each of four multi-tensor kernels instead
    // of eight kernels per parameter: on a GPU a small model's slot is bound by kernel launches.
    std::vector<torch::Tensor> p, m;
    for (std::size_t k = 0; k < params_.size(); ++k) {
      p.push_back(params_[k].narrow(0, who.front(), count));
      m.push_back(momentum_[k].narrow(0, who.front(), count));
    }
    const std::vector<torch::Tensor> d = torch::_foreach_add(grads, p, optimizer_.weight_decay);  // d = g + wd p
    torch::_foreach_mul_(m, optimizer_.momentum);                                                 // buf = mu buf + d
    torch::_foreach_add_(m, d);
    torch::_foreach_add_(p, m, -optimizer_.lr);  // p = p - lr buf
    return;
  }
  // Other devices, scattered rows: the same update on copies of the stepping rows, written back.
  const torch::Tensor index = to_device(torch::tensor(who, torch::kInt64), device_);
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const torch::Tensor p = params_[k].index_select(0, index), m = momentum_[k].index_select(0, index);
    m.mul_(optimizer_.momentum).add_(grads[k].add(p, optimizer_.weight_decay));
    p.add_(m, -optimizer_.lr);
    momentum_[k].index_copy_(0, index, m);
    params_[k].index_copy_(0, index, p);
  }
}

double BatchedReplicaSet::gradient_step(const Dataset& train, const std::vector<IndexSpan>& batches) {
  std::vector<std::int64_t> index;
  for (const auto& span : batches) index.insert(index.end(), span.data, span.data + span.size);
  if (index.empty()) return 0.0;
  const auto total = static_cast<std::int64_t>(index.size());
  const torch::Tensor rows = to_device(torch::tensor(index, torch::kInt64), device_);
  const torch::Tensor inputs = train.images.index_select(0, rows).unsqueeze(0);
  const std::vector<std::int64_t> shared{0};  // the shared model is replica 0 (ReplicaSet::gradient_step)
  const torch::Tensor weights = torch::full({total}, 1.0 / static_cast<double>(total), inputs.options());
  const StackedGradients g = gradients(rows_of(shared), inputs, train.labels.index_select(0, rows), weights);
  sgd_update(shared, g.grads);
  others_stale_ = num_workers_ > 1;
  return g.losses.item<double>();
}

std::vector<double> BatchedReplicaSet::local_steps(const Dataset& train, const std::vector<std::vector<IndexSpan>>& batches) {
  return local_steps_together({{this, &train, &batches}})[0];
}

std::vector<std::vector<double>> BatchedReplicaSet::local_steps_together(const std::vector<LocalStepsJob>& jobs) {
  if (jobs.empty()) return {};
  BatchedReplicaSet& first = *jobs[0].replicas;
  std::size_t slots = 0;
  for (const auto& job : jobs) {
    BatchedReplicaSet& set = *job.replicas;
    if (set.kind_ != first.kind_ || set.device_ != first.device_ || set.params_.size() != first.params_.size())
      throw std::invalid_argument("local_steps_together: the replica sets must hold the same model on the same device");
    for (std::size_t k = 0; k < set.params_.size(); ++k)
      if (!set.params_[k].sizes().slice(1).equals(first.params_[k].sizes().slice(1)))
        throw std::invalid_argument("local_steps_together: the replica sets must hold the same model (parameter shapes differ)");
    if (job.batches->size() != static_cast<std::size_t>(set.num_workers_))
      throw std::invalid_argument("local_steps: one list of batches per worker");
    if (set.others_stale_) set.make_all_equal_to_first();
    for (const auto& b : *job.batches) slots = std::max(slots, b.size());
  }
  const torch::Device device = first.device_;
  // One data set for every job (the usual case: environments share one copy) is gathered with one
  // index; otherwise job by job.
  bool shared_data = true;
  for (const auto& job : jobs)
    shared_data = shared_data && job.train->images.data_ptr() == jobs[0].train->images.data_ptr() &&
                  job.train->labels.data_ptr() == jobs[0].train->labels.data_ptr();
  std::vector<std::vector<std::vector<double>>> losses(jobs.size());  // [job][worker] -> step losses
  for (std::size_t j = 0; j < jobs.size(); ++j) losses[j].resize(jobs[j].batches->size());
  std::vector<std::vector<SlotLosses>> pending(jobs.size());  // off the CPU: read after the round
  for (std::size_t s = 0; s < slots; ++s) {
    // The workers with a step in this slot, job by job, in order; every row padded to the widest batch.
    std::vector<std::vector<std::int64_t>> who(jobs.size());
    std::int64_t widest = 1, rows_in_slot = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const auto& batches = *jobs[j].batches;
      for (std::size_t i = 0; i < batches.size(); ++i)
        if (s < batches[i].size() && batches[i][s].size > 0) {
          who[j].push_back(static_cast<std::int64_t>(i));
          widest = std::max(widest, batches[i][s].size);
        }
      rows_in_slot += static_cast<std::int64_t>(who[j].size());
    }
    if (rows_in_slot == 0) continue;
    // Row r holds one worker's samples; the rest of the row repeats one of them with weight 0.
    std::vector<std::int64_t> index(static_cast<std::size_t>(rows_in_slot * widest));
    std::vector<float> weight(index.size(), 0.0f);
    std::size_t row = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j)
      for (const std::int64_t worker : who[j]) {
        const IndexSpan span = (*jobs[j].batches)[static_cast<std::size_t>(worker)][s];
        const auto at = index.begin() + static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(widest));
        std::copy(span.data, span.data + span.size, at);
        std::fill(at + span.size, at + widest, span.data[0]);
        const auto w = weight.begin() + static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(widest));
        std::fill(w, w + span.size, 1.0f / static_cast<float>(span.size));
        ++row;
      }
    torch::Tensor inputs, targets;
    const torch::Tensor all_rows = to_device(torch::tensor(index, torch::kInt64), device);
    if (shared_data) {
      inputs = jobs[0].train->images.index_select(0, all_rows);
      targets = jobs[0].train->labels.index_select(0, all_rows);
    } else {
      std::vector<torch::Tensor> image_parts, label_parts;
      std::int64_t offset = 0;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const std::int64_t count = static_cast<std::int64_t>(who[j].size()) * widest;
        if (count == 0) continue;
        const torch::Tensor part = all_rows.narrow(0, offset, count);
        image_parts.push_back(jobs[j].train->images.index_select(0, part));
        label_parts.push_back(jobs[j].train->labels.index_select(0, part));
        offset += count;
      }
      inputs = torch::cat(image_parts);
      targets = torch::cat(label_parts);
    }
    std::vector<std::int64_t> shape{rows_in_slot, widest};
    for (std::int64_t d = 1; d < inputs.dim(); ++d) shape.push_back(inputs.size(d));
    // Only the replicas that step are computed: Orchestra's fast workers take several times the
    // slow ones' steps, and the tail of a round would otherwise compute idle replicas.
    std::vector<std::vector<torch::Tensor>> rows_by_job;
    for (std::size_t j = 0; j < jobs.size(); ++j)
      if (!who[j].empty()) rows_by_job.push_back(jobs[j].replicas->rows_of(who[j]));
    std::vector<torch::Tensor> rows = rows_by_job[0];
    if (rows_by_job.size() > 1)
      for (std::size_t k = 0; k < rows.size(); ++k) {
        std::vector<torch::Tensor> parts;
        for (const auto& r : rows_by_job) parts.push_back(r[k]);
        rows[k] = torch::cat(parts);
      }
    const StackedGradients g = first.gradients(rows, inputs.view(shape), targets, to_device(torch::tensor(weight), device));
    // Each job's rows of the gradients, to its own optimizer.
    std::int64_t offset = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      if (who[j].empty()) continue;
      const auto count = static_cast<std::int64_t>(who[j].size());
      std::vector<torch::Tensor> grads;
      for (const auto& grad : g.grads) grads.push_back(rows_by_job.size() > 1 ? grad.narrow(0, offset, count) : grad);
      jobs[j].replicas->sgd_update(who[j], grads);
      const torch::Tensor job_losses = rows_by_job.size() > 1 ? g.losses.narrow(0, offset, count) : g.losses;
      offset += count;
      if (!device.is_cpu()) {
        pending[j].push_back({std::move(who[j]), job_losses});
        continue;
      }
      const torch::Tensor on_cpu = job_losses.to(torch::kCPU, torch::kDouble).contiguous();
      for (std::size_t r = 0; r < who[j].size(); ++r)
        losses[j][static_cast<std::size_t>(who[j][r])].push_back(on_cpu.data_ptr<double>()[r]);
    }
  }
  read_losses(pending, losses);
  std::vector<std::vector<double>> out(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j)
    for (const auto& l : losses[j]) out[j].insert(out[j].end(), l.begin(), l.end());
  return out;
}

void BatchedReplicaSet::average(const std::vector<int>& members, const std::vector<double>& weights, const std::vector<int>& receivers) {
  if (members.empty()) return;
  if (others_stale_) make_all_equal_to_first();
  torch::NoGradGuard no_grad;
  const torch::Tensor who = to_device(torch::tensor(std::vector<std::int64_t>(members.begin(), members.end()), torch::kInt64), device_);
  const torch::Tensor w = to_device(torch::tensor(weights, torch::kDouble).to(params_[0].scalar_type()), device_);
  const bool everyone = static_cast<int>(receivers.size()) == num_workers_;
  const torch::Tensor to =
      to_device(torch::tensor(std::vector<std::int64_t>(receivers.begin(), receivers.end()), torch::kInt64), device_);
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

void BatchedReplicaSet::reset_momentum() {
  torch::NoGradGuard no_grad;
  for (auto& m : momentum_) m.zero_();  // buf = mu 0 + d: the first step's d, as a fresh buffer
}

void BatchedReplicaSet::global_update(const GlobalAverage& global) {
  if (global.members.empty()) return;
  if (round_start_.size() != params_.size()) throw std::logic_error("global_update without snapshot_global at the round's start");
  torch::NoGradGuard no_grad;
  std::vector<std::vector<torch::Tensor>> workers;
  for (int m : global.members) {
    std::vector<torch::Tensor> views;
    for (const auto& p : params_) views.push_back(p[m]);
    workers.push_back(std::move(views));
  }
  std::vector<torch::Tensor> next = combine(global, optimizer_.momentum, round_start_, workers);
  if (global.outer) next = outer_.step(round_start_, next, *global.outer);
  for (std::size_t k = 0; k < params_.size(); ++k) params_[k].copy_(next[k].unsqueeze(0));
}

EvalResult BatchedReplicaSet::evaluate(const Dataset& test) {
  if (others_stale_) make_all_equal_to_first();
  {
    torch::NoGradGuard no_grad;
    auto target = eval_model_->parameters();
    for (std::size_t k = 0; k < params_.size(); ++k) target[k].copy_(from_stacked_layout(params_[k][0]));
  }
  return evaluate_classifier(*eval_model_, test, device_);
}

std::vector<torch::Tensor> BatchedReplicaSet::state(int worker) {
  if (others_stale_) make_all_equal_to_first();
  std::vector<torch::Tensor> out;
  for (const auto& p : params_) out.push_back(from_stacked_layout(p[worker].detach()).clone());
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
  if (mode == ReplicaMode::Auto) mode = prefers_batched(model.arch, device) ? ReplicaMode::Batched : ReplicaMode::Sequential;
  if (mode == ReplicaMode::Batched && can_stack(model.arch))
    return std::make_unique<BatchedReplicaSet>(model, input_shape, classes, num_workers, optimizer, seed, device);
  if (mode == ReplicaMode::Batched) {
    static std::once_flag notice;  // once per process: the RL environment builds one cluster per episode
    std::call_once(notice, [&] {
      std::cerr << "note: the " << model.arch
                << " model has batch norm and does not stack; its replicas train one after another (runtime.replicas: sequential)\n";
    });
  }
  return std::make_unique<ReplicaSet>(model, input_shape, classes, num_workers, optimizer, seed, device);
}

bool prefers_batched(const std::string& arch, torch::Device device) {
  const ModelKind& kind = model_kind(arch);
  return kind.stacked_forward && (kind.batch_on_cpu || !device.is_cpu());
}

}  // namespace env
