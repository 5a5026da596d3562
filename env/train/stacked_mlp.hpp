// The stacked MLP's gradients written out by hand: forward, weighted cross-entropy and backward of
// n replicas as a handful of batched matrix products, with no autograd graph.
//
// Why by hand: for the small MLPs of a barrier study, a slot of n replica steps costs a few batched
// products of arithmetic but, through autograd, some forty further libtorch calls (graph nodes,
// gradient buffers zeroed then accumulated, the loss's reductions) and a gradient buffer for every
// replica's every parameter. Written out, a slot is two products per layer (one for the weight
// gradient, one to carry the gradient down) plus element-wise work on [n, B, width] activations,
// which are small. The arithmetic is autograd's: the same products in the same shapes, so results
// agree with the autograd path to floating-point reassociation (tested in test_batched_replicas).
#pragma once

#include <torch/torch.h>

#include <vector>

namespace env {

struct StackedGradients {
  std::vector<torch::Tensor> grads;  // one per parameter, [n, ...] like `params`
  torch::Tensor losses;              // [n]: each replica's sum of weighted sample losses
};

// `params`: the MLP's (weight [n, in, out], bias [n, out]) pairs in layer order, ReLU between
// layers (models.cpp's Mlp in stacked_layout). x: [n, B, ...] (flattened here to [n, B, in]); targets: [n*B]
// class indices; sample_weights: [n*B] (1/B_i for a worker's samples, 0 for padding, whose loss
// and gradient are then exactly zero). Gradients of sum(sample_weights * per-sample loss).
StackedGradients stacked_mlp_gradients(const std::vector<torch::Tensor>& params, const torch::Tensor& x, const torch::Tensor& targets,
                                       const torch::Tensor& sample_weights);

}  // namespace env
