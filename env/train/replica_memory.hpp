// What a simulated cluster's replicas take in memory, worked out from the config before anything
// is allocated, so that a model too large for the machine is refused with one line when the
// config is read. Without it, Linux lends memory it does not have (overcommit): the allocation
// succeeds, and the kernel's OOM killer ends the process while the replicas are initialized or
// first trained, with no message and nothing written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/train/dataset.hpp"
#include "env/train/models.hpp"
#include "env/train/worker_replicas.hpp"

namespace env {

// The model's trainable parameters for inputs [C, H, W] and `classes` outputs, counted from its
// shape (every row of model_registry(); a test checks each against the built model).
std::int64_t parameter_count(const ModelSpec& model, const std::vector<std::int64_t>& input_shape, int classes);

// float32 bytes the replicas of `workers` workers hold: per worker its parameters, gradients and
// (with momentum) SGD's momentum buffer, both for sequential replicas (one model and optimizer per
// worker) and batched ones (the same, stacked); and two copies for the whole cluster (the global
// model at the round's start, and the one evaluated).
double replicas_bytes(std::int64_t parameters, int workers, const OptimizerSpec& optimizer);

// Bytes a synthetic data set holds (its train and test samples, float32 pixels and int64 labels),
// and why it cannot be held by a machine of `memory_bytes` (0: unknown), or nullopt.
double synthetic_data_bytes(const DataSpec& data);
std::optional<std::string> synthetic_data_memory_problem(const DataSpec& data, double memory_bytes);

// This machine's physical memory in bytes (sysconf); 0 where it cannot say.
double machine_memory_bytes();

// Why `bytes` of replicas cannot run on a machine of `memory_bytes` (0: unknown, nothing said):
// "mlp [65536, 65536] (4.3 G parameters) on 16 workers needs about 1.7 TB for its replicas, more
// than this machine's 23.4 GB of memory: use a smaller model or fewer workers"; nullopt if it fits.
std::optional<std::string> replicas_memory_problem(const ModelSpec& model, std::int64_t parameters, int workers, double bytes,
                                                   double memory_bytes);

}  // namespace env
