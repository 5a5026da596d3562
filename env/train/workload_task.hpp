// The workload of a config as a surrogate's task (env/surrogate/surrogate_task.hpp): measured from
// the loaded data and the built model (the round log), or as far as a config says it without
// loading anything (an experiment or RL environment that asks for a surrogate).
#pragma once

#include "env/surrogate/surrogate_task.hpp"
#include "env/train/dataset.hpp"
#include "env/train/local_sgd_env.hpp"

namespace env {

// "mlp [64]", "cnn", "resnet [blocks 1, width 16]": the model's arch: spelling and shape.
std::string model_description(const ModelSpec& model);

// The task with its sizes from `data` and the parameter count of the model built for it.
SurrogateTask task_of(const DataSpec& data_spec, const TrainingSpec& training, int global_batch,
                           const DatasetPair& data);

// The task a config asks for: sizes are its train_limit / test_limit (0 = the whole split).
SurrogateTask wanted_task(const DataSpec& data_spec, const TrainingSpec& training, int global_batch);

}  // namespace env
