#include "env/train/stacked_mlp.hpp"

#include <stdexcept>

namespace env {

StackedGradients stacked_mlp_gradients(const std::vector<torch::Tensor>& params, const torch::Tensor& x, const torch::Tensor& targets,
                                       const torch::Tensor& sample_weights) {
  if (params.empty() || params.size() % 2 != 0) throw std::invalid_argument("stacked_mlp_gradients: expected (weight, bias) pairs");
  torch::NoGradGuard no_grad;
  const std::size_t layers = params.size() / 2;
  const auto n = x.size(0), batch = x.size(1);

  // Forward, keeping every layer's input (the ReLU outputs) for the backward pass.
  std::vector<torch::Tensor> inputs{x.reshape({n, batch, -1})};
  torch::Tensor logits;
  for (std::size_t l = 0; l < layers; ++l) {
    const torch::Tensor z = torch::baddbmm(params[2 * l + 1].unsqueeze(1), inputs.back(), params[2 * l]);
    if (l + 1 < layers) {
      inputs.push_back(torch::relu(z));
    } else {
      logits = z;
    }
  }

  // Cross-entropy per sample, l = logsumexp(z) - z_target, and its gradient softmax(z) - onehot,
  // both scaled by the sample's weight.
  const torch::Tensor index = targets.view({n, batch, 1});
  const torch::Tensor log_norm = logits.logsumexp(2, /*keepdim=*/true);
  const torch::Tensor weights = sample_weights.view({n, batch, 1});
  StackedGradients out;
  out.losses = ((log_norm - logits.gather(2, index)) * weights).sum({1, 2});
  torch::Tensor delta = (logits - log_norm).exp_();
  delta.scatter_add_(2, index, torch::full({n, batch, 1}, -1.0, logits.options()));
  delta.mul_(weights);

  // Backward: dW_l = a_l^T delta, db_l = sum over the batch, then delta through W_l and the ReLU
  // (threshold_backward is what autograd's ReLU uses: zero where the activation is zero).
  out.grads.resize(params.size());
  for (std::size_t l = layers; l-- > 0;) {
    out.grads[2 * l] = torch::bmm(inputs[l].transpose(1, 2), delta);
    out.grads[2 * l + 1] = delta.sum(1);
    if (l > 0) delta = torch::threshold_backward(torch::bmm(delta, params[2 * l].transpose(1, 2)), inputs[l], 0);
  }
  return out;
}

}  // namespace env
