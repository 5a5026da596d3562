// What one training step costs on THIS machine, for LBB's profiling phase (Alg. 1, function
// WORKER): forward and backward of the configured model on a synthetic batch ("simulated input
// data similar to Dataset D", line 2), timed with the wall clock. `orchestra profile` drives it
// with lbb::profile_until_out_of_memory to fit the machine's performance model (Eq. 1).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "env/train/models.hpp"

namespace env {

class StepTimer {
 public:
  // A freshly initialized model (weights from `seed`) for inputs of shape [C, H, W].
  StepTimer(const ModelSpec& model, std::vector<std::int64_t> input_shape, int classes, std::uint64_t seed);

  // Wall time in ms of forward + cross-entropy + backward over `batch` synthetic samples (Alg. 1
  // lines 7-9 and 14). The batch is drawn before the clock starts (line 6), and the first call at
  // a new size runs once untimed: that call allocates the activations and lets oneDNN pick its
  // kernels, which no training step after the first pays again. nullopt when the memory for the
  // batch cannot be allocated (line 10); any other error propagates.
  std::optional<double> step_ms(int batch);

  double parameter_bytes() const { return parameter_bytes_; }

 private:
  double timed_step();

  std::shared_ptr<Classifier> model_;
  std::vector<std::int64_t> input_shape_;
  int classes_;
  double parameter_bytes_ = 0;
  int batch_ = 0;  // size of the batch drawn below
  torch::Tensor input_, target_;
};

// Whether a libtorch error is an allocation failure: the CPU allocator's "can't allocate memory"
// or CUDA's "out of memory".
bool is_out_of_memory(const c10::Error& error);

}  // namespace env
