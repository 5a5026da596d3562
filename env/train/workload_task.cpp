#include "env/train/workload_task.hpp"

#include <string>

#include "env/train/models.hpp"

namespace env {

std::string model_description(const ModelSpec& model) {
  std::string text = model.arch;
  if (model.arch == "mlp") {
    text += " [";
    for (std::size_t i = 0; i < model.hidden.size(); ++i) text += (i ? ", " : "") + std::to_string(model.hidden[i]);
    return text + "]";
  }
  if (model.arch == "resnet")
    return text + " [blocks " + std::to_string(model.resnet_blocks) + ", width " + std::to_string(model.resnet_width) + "]";
  return text;
}

SurrogateTask wanted_task(const DataSpec& data_spec, const TrainingSpec& training, int global_batch) {
  SurrogateTask t;
  t.dataset = data_spec.dataset;
  t.train_samples = data_spec.dataset == "synthetic" ? data_spec.synthetic_train : data_spec.train_limit;
  t.test_samples = data_spec.dataset == "synthetic" ? data_spec.synthetic_test : data_spec.test_limit;
  t.model = model_description(training.model);
  t.global_batch = global_batch;
  t.lr = training.optimizer.lr;
  t.momentum = training.optimizer.momentum;
  t.weight_decay = training.optimizer.weight_decay;
  t.lr_schedule = training.lr_schedule == LrSchedule::Cosine ? "cosine" : "constant";
  return t;
}

SurrogateTask task_of(const DataSpec& data_spec, const TrainingSpec& training, int global_batch,
                           const DatasetPair& data) {
  SurrogateTask t = wanted_task(data_spec, training, global_batch);
  t.train_samples = data.train.size();
  t.test_samples = data.test.size();
  const auto& images = data.train.images;
  auto model = make_model(training.model, {images.size(1), images.size(2), images.size(3)}, data.train.num_classes);
  t.parameters = static_cast<std::int64_t>(parameter_bytes(*model) / 4.0);  // float32 parameters
  return t;
}

}  // namespace env
