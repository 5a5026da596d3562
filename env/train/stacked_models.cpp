#include "env/train/stacked_models.hpp"

#include <stdexcept>

namespace env {
namespace {

// x [n, B, in], weight [n, in, out] (transposed), bias [n, out] -> [n, B, out]: x W^T + b per replica.
torch::Tensor stacked_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return torch::baddbmm(bias.unsqueeze(1), x, weight);
}

// x [B, n*C, H, W] (replica-major channels), weight [n, out, C, k, k], bias [n, out]
// -> [B, n*out, H', W']: one group per replica, so replica r only sees its own channels.
torch::Tensor stacked_conv(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, std::int64_t padding) {
  const auto n = weight.size(0), out = weight.size(1);
  return torch::conv2d(x, weight.reshape({n * out, weight.size(2), weight.size(3), weight.size(4)}), bias.reshape({n * out}),
                       /*stride=*/1, padding, /*dilation=*/1, /*groups=*/n);
}

// Fully connected layers from params[first] on: (weight, bias) pairs, ReLU between them.
torch::Tensor linear_tail(torch::Tensor x, const std::vector<torch::Tensor>& params, std::size_t first) {
  for (std::size_t k = first; k + 1 < params.size(); k += 2) {
    x = stacked_linear(x, params[k], params[k + 1]);
    if (k + 2 < params.size()) x = torch::relu(x);
  }
  return x;
}

}  // namespace

// Linear weights are the models' only 2-D parameters (convolution weights are 4-D, biases 1-D).
torch::Tensor to_stacked_layout(const torch::Tensor& parameter) { return parameter.dim() == 2 ? parameter.t().contiguous() : parameter; }
torch::Tensor from_stacked_layout(const torch::Tensor& stacked_replica) {
  return stacked_replica.dim() == 2 ? stacked_replica.t().contiguous() : stacked_replica;
}

bool can_stack(const std::string& arch) { return model_kind(arch).stacked_forward != nullptr; }

torch::Tensor stacked_mlp_forward(const std::vector<torch::Tensor>& params, const torch::Tensor& x) {
  return linear_tail(x.reshape({x.size(0), x.size(1), -1}), params, 0);
}

torch::Tensor stacked_cnn_forward(const std::vector<torch::Tensor>& params, const torch::Tensor& x) {
  const auto n = x.size(0), batch = x.size(1);
  // As LeNet::forward: conv5 pad 2, pool, conv5, pool, then three linear layers.
  torch::Tensor h = x.transpose(0, 1).reshape({batch, n * x.size(2), x.size(3), x.size(4)});
  h = torch::max_pool2d(torch::relu(stacked_conv(h, params[0], params[1], 2)), 2);
  h = torch::max_pool2d(torch::relu(stacked_conv(h, params[2], params[3], 0)), 2);
  // [B, n*16, s, s] -> [n, B, 16*s*s]: each replica's features flattened as flatten(1) does.
  h = h.reshape({batch, n, -1}).transpose(0, 1);
  return linear_tail(h, params, 4);
}

torch::Tensor stacked_forward(const std::string& arch, const std::vector<torch::Tensor>& params, const torch::Tensor& x) {
  const ModelKind& kind = model_kind(arch);
  if (!kind.stacked_forward) throw std::invalid_argument("the " + arch + " model cannot be stacked");
  return kind.stacked_forward(params, x);
}

}  // namespace env
