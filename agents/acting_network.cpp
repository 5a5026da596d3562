#include "agents/acting_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "orchestra/barrier_env.hpp"

namespace agents {
namespace {

constexpr int kHeadOutputs = orchestra::kNumBarrierActions + 1;  // 3 logits, then V

// out = bias + x W^T for one row, W given transposed ([in x out]).
void affine(const float* x, int in, int out, const float* weight_t, const float* bias, float* y) {
  std::copy(bias, bias + out, y);
  for (int i = 0; i < in; ++i) {
    const float xi = x[i];
    const float* w = weight_t + static_cast<std::size_t>(i) * static_cast<std::size_t>(out);
    for (int o = 0; o < out; ++o) y[o] += xi * w[o];
  }
}

}  // namespace

ActingNetwork::ActingNetwork(const ActorCriticSpec& spec) : spec_(spec) {
  if (spec_.observation_size < 1 || spec_.hidden.empty())
    throw std::invalid_argument("acting network: needs an observation size >= 1 and at least one hidden layer");
  int in = spec_.observation_size;
  for (int width : spec_.hidden) {
    if (width < 1) throw std::invalid_argument("acting network: hidden widths must be >= 1, got " + std::to_string(width));
    trunk_.push_back(Layer{in, width, std::vector<float>(static_cast<std::size_t>(in) * width), std::vector<float>(static_cast<std::size_t>(width))});
    parameter_count_ += static_cast<std::size_t>(in) * width + width;
    in = width;
  }
  head_ = Layer{in, kHeadOutputs, std::vector<float>(static_cast<std::size_t>(in) * kHeadOutputs), std::vector<float>(kHeadOutputs)};
  parameter_count_ += static_cast<std::size_t>(in) * kHeadOutputs + kHeadOutputs;
}

void ActingNetwork::load(ActorCritic& net) {
  if (net->spec().observation_size != spec_.observation_size || net->spec().hidden != spec_.hidden)
    throw std::invalid_argument("acting network: the network is not of this spec");
  load(flat_parameters(net));
}

void ActingNetwork::load(const std::vector<float>& flat) {
  if (flat.size() != parameter_count_)
    throw std::invalid_argument("acting network: expected " + std::to_string(parameter_count_) + " parameters, got " +
                                std::to_string(flat.size()));
  // Parameter order (actor_critic.hpp): each trunk Linear's weight [out x in] then bias, then
  // policy.weight [3 x h], policy.bias, value.weight [1 x h], value.bias.
  std::size_t at = 0;
  const auto take_transposed = [&](Layer& layer, int first_output, int outputs) {
    for (int o = 0; o < outputs; ++o)
      for (int i = 0; i < layer.in; ++i)
        layer.weight_t[static_cast<std::size_t>(i) * layer.out + first_output + o] = flat[at++];
    for (int o = 0; o < outputs; ++o) layer.bias[static_cast<std::size_t>(first_output + o)] = flat[at++];
  };
  for (Layer& layer : trunk_) take_transposed(layer, 0, layer.out);
  take_transposed(head_, 0, orchestra::kNumBarrierActions);
  take_transposed(head_, orchestra::kNumBarrierActions, 1);
}

void ActingNetwork::forward(const float* observations, int rows, ActingOutput& out) const {
  if (rows < 0) throw std::invalid_argument("acting network: negative row count");
  const auto n = static_cast<std::size_t>(rows);
  out.probabilities.resize(n * orchestra::kNumBarrierActions);
  out.values.resize(n);
  int widest = spec_.observation_size;
  for (const Layer& l : trunk_) widest = std::max(widest, l.out);
  std::vector<float> a(static_cast<std::size_t>(widest)), b(static_cast<std::size_t>(widest));
  float head[kHeadOutputs];
  for (std::size_t r = 0; r < n; ++r) {
    const float* x = observations + r * static_cast<std::size_t>(spec_.observation_size);
    for (const Layer& l : trunk_) {
      affine(x, l.in, l.out, l.weight_t.data(), l.bias.data(), b.data());
      for (int o = 0; o < l.out; ++o) b[static_cast<std::size_t>(o)] = std::tanh(b[static_cast<std::size_t>(o)]);
      std::swap(a, b);
      x = a.data();
    }
    affine(x, head_.in, head_.out, head_.weight_t.data(), head_.bias.data(), head);
    // Softmax of the logits, shifted by their maximum (as torch's) so that exp never overflows.
    const double top = std::max({head[0], head[1], head[2]});
    double e[orchestra::kNumBarrierActions], sum = 0;
    for (int k = 0; k < orchestra::kNumBarrierActions; ++k) sum += e[k] = std::exp(static_cast<double>(head[k]) - top);
    for (int k = 0; k < orchestra::kNumBarrierActions; ++k) out.probabilities[r * orchestra::kNumBarrierActions + static_cast<std::size_t>(k)] = e[k] / sum;
    out.values[r] = head[orchestra::kNumBarrierActions];
  }
}

}  // namespace agents
