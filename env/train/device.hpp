// Where training runs: `runtime.device: cpu | cuda | cuda:N`. The replicas, the batches and the
// averaging live on the device; the data set is copied there once per run, not per step.
#pragma once

#include <torch/torch.h>

#include <string>

namespace env {

// "cpu", "cuda" (GPU 0) or "cuda:N". Throws std::invalid_argument with one line for a spelling it
// does not know, a libtorch built without CUDA or with no GPU visible, or N past the visible GPUs.
torch::Device resolve_device(const std::string& spec);

}  // namespace env
