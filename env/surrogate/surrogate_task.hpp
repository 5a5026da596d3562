// The workload a surrogate of training was fitted on: the data set, the model, the optimizer and the
// global batch. A surrogate models how one workload trains (Fashion-MNIST's MLP, say) on any
// cluster and barrier schedule; it knows nothing of another model or data set, so an experiment or
// RL environment that asks for the surrogate must run the same workload (check_task_matches).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace env {

struct SurrogateTask {
  std::string dataset;              // "fashion-mnist" (dataset.hpp's spelling)
  std::int64_t train_samples = 0;   // after train_limit
  std::int64_t test_samples = 0;    // after test_limit
  std::string model;                // "mlp [64]": the arch: spelling and its shape keys
  std::int64_t parameters = 0;      // trainable parameters (a descriptor; not checked)
  int global_batch = 0;
  double lr = 0;
  double momentum = 0;
  double weight_decay = 0;
  std::string lr_schedule;          // "constant" | "cosine"
};

// What an experiment asks for, as far as it can be told without loading the data: train_samples
// and test_samples 0 mean "the whole split" (no limit given), which is taken to be the surrogate's.
// Returns "" when `wanted` is the surrogate's task, else a sentence naming the first difference
// ("the surrogate was fitted on model mlp [64], this experiment trains mlp [256, 128]").
std::string task_mismatch(const SurrogateTask& fitted, const SurrogateTask& wanted);

// The task as the surrogate file and the round log's task.json hold it.
nlohmann::json task_to_json(const SurrogateTask& task);
// Throws std::invalid_argument naming the first missing or ill-typed field.
SurrogateTask task_from_json(const nlohmann::json& json);

}  // namespace env
