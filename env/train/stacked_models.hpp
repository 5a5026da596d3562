// The models written as functions of stacked parameters, so that n replicas run as one
// computation (the idea of torch.func's stack_module_state + vmap ensembles): every parameter
// tensor gains a leading replica dimension, linear layers become batched matrix products
// (baddbmm) and convolutions become grouped convolutions with one group per replica.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "env/train/models.hpp"

namespace env {

// Whether a model stacks (its row in the model table has a stacked forward): the MLP and the
// LeNet-like CNN do; the ResNet does not (its batch norm keeps running statistics per replica, and
// a stacked batch norm would need its own layer).
bool can_stack(const std::string& arch);

// A parameter of the model in the stacked layout (one replica, no leading n), and back.
torch::Tensor to_stacked_layout(const torch::Tensor& parameter);
torch::Tensor from_stacked_layout(const torch::Tensor& stacked_replica);

// Logits [n, B, classes] of n replicas for inputs x [n, B, C, H, W]; `params` holds the model's
// parameters in Classifier::parameters() order, each with a leading dimension n, and linear
// weights stored transposed, [n, in, out] (stacked_layout): baddbmm then reads them as they lie,
// where a transposed view would cost a copy of the weight's gradient in every backward.
torch::Tensor stacked_forward(const std::string& arch, const std::vector<torch::Tensor>& params, const torch::Tensor& x);
// The rows' stacked forwards: the MLP's, and the CNN's as LeNet::forward computes it.
torch::Tensor stacked_mlp_forward(const std::vector<torch::Tensor>& params, const torch::Tensor& x);
torch::Tensor stacked_cnn_forward(const std::vector<torch::Tensor>& params, const torch::Tensor& x);

}  // namespace env
