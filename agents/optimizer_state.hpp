// The server optimizer's state (Adam's moments, RMSProp's averages) in a checkpoint, by parameter
// index. libtorch's own Optimizer::save keys it by each tensor's address, so two identical
// trainings wrote checkpoints of different bytes, and the same training resumed and saved again
// another; by index, the same training writes the same file.
#pragma once

#include <torch/torch.h>

namespace agents {

// Adam and RMSprop; another optimizer's state throws std::logic_error (a bug, not an input).
void save_optimizer_state(const torch::optim::Optimizer& optimizer, torch::serialize::OutputArchive& archive);

// Into `optimizer` (built over parameters of the same shapes). Throws std::invalid_argument saying
// what does not fit: another optimizer's state (a3c.optimizer changed), another number or shape of
// parameters.
void load_optimizer_state(torch::optim::Optimizer& optimizer, torch::serialize::InputArchive& archive);

}  // namespace agents
