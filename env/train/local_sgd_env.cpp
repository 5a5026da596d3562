#include "env/train/local_sgd_env.hpp"

#include <cmath>
#include <limits>

#include "common/errors.hpp"
#include "env/sim/round_rules.hpp"
#include "env/train/batched_replicas.hpp"
#include "env/train/dataset_registry.hpp"
#include "env/train/stacked_models.hpp"
#include "env/train/device.hpp"
#include "env/train/step_batcher.hpp"

namespace env {

std::vector<std::int64_t> input_shape_of(const DataSpec& spec) { return dataset_kind(spec.dataset).input_shape(spec); }

LocalSgdEnv::LocalSgdEnv(EnvSpec spec, std::shared_ptr<const DatasetPair> data, std::uint64_t seed,
                         std::vector<std::int64_t> input_shape)
    : training_(spec.training), batching_(spec.batching), data_(std::move(data)) {
  const int workers = spec.simulation.cluster.num_workers();
  if (!training_.timing_only) {
    if (!data_) throw std::invalid_argument("a training run needs a dataset");
    device_ = resolve_device(training_.device);
    prepare_device(device_, training_.tf32);
    placed_ = place_on(data_, device_);  // once per process on a GPU: the steps then only send indices
    const auto& images = data_->train.images;
    const std::vector<std::int64_t> shape{images.size(1), images.size(2), images.size(3)};
    // Stepping with other environments needs the stacked layout (the model must stack).
    const ReplicaMode mode = batching_.batcher && can_stack(training_.model.arch) ? ReplicaMode::Batched : training_.replicas;
    replicas_ = make_replicas(mode, training_.model, shape, data_->train.num_classes, workers, training_.optimizer, seed, device_);
    spec.simulation.train_samples = data_->train.size();
    if (spec.simulation.message_bytes <= 0) spec.simulation.message_bytes = replicas_->parameter_bytes();
  }
  if (training_.timing_only && spec.simulation.message_bytes <= 0)
    spec.simulation.message_bytes = parameter_bytes(*make_model(training_.model, input_shape, 10));
  if (spec.simulation.train_samples <= 0) throw std::invalid_argument("the environment needs train_samples > 0");
  if (spec.simulation.message_bytes <= 0) throw std::invalid_argument("the environment needs message_bytes > 0");
  spec.simulation.shards = training_.shards;  // one setting: the training's
  simulation_ = std::make_unique<Simulation>(std::move(spec.simulation), seed,
                                             training_.timing_only ? nullptr : static_cast<TrainingHooks*>(this));
}

EpochReport LocalSgdEnv::finish_epoch() {
  EpochReport report = simulation_->finish_epoch();
  const EvalResult eval = evaluate();
  report.accuracy = eval.accuracy;
  report.loss = eval.loss;
  return report;
}

EvalResult LocalSgdEnv::evaluate() {
  if (!replicas_) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  return replicas_->evaluate(placed_->test);
}

void LocalSgdEnv::begin_epoch(int epoch) {
  if (training_.lr_schedule != LrSchedule::Cosine) return;
  replicas_->set_learning_rate(cosine_learning_rate(training_.optimizer.lr, epoch, training_.planned_epochs));
}

double LocalSgdEnv::gradient_round(const std::vector<IndexSpan>& batches) { return replicas_->gradient_step(train_data(), batches); }

std::vector<double> LocalSgdEnv::local_steps(const std::vector<std::vector<IndexSpan>>& batches) {
  if (batching_.batcher)
    if (auto* stacked = dynamic_cast<BatchedReplicaSet*>(replicas_.get()))
      return batching_.batcher->local_steps(batching_.member, *stacked, train_data(), batches);
  return replicas_->local_steps(train_data(), batches);
}

}  // namespace env
