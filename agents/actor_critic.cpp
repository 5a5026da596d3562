#include "agents/actor_critic.hpp"

#include <stdexcept>
#include <string>

namespace agents {

ActorCriticImpl::ActorCriticImpl(ActorCriticSpec spec) : spec_(std::move(spec)) {
  if (spec_.observation_size < 1)
    throw std::invalid_argument("actor-critic: observation_size must be >= 1, got " + std::to_string(spec_.observation_size));
  if (spec_.hidden.empty()) throw std::invalid_argument("actor-critic: at least one hidden layer is needed");
  trunk_ = torch::nn::Sequential();
  std::int64_t in = spec_.observation_size;
  for (int width : spec_.hidden) {
    if (width < 1) throw std::invalid_argument("actor-critic: hidden widths must be >= 1, got " + std::to_string(width));
    trunk_->push_back(torch::nn::Linear(in, width));
    trunk_->push_back(torch::nn::Tanh());
    in = width;
  }
  trunk_ = register_module("trunk", trunk_);
  if (spec_.actions < 2) throw std::invalid_argument("actor-critic: at least two actions are needed, got " + std::to_string(spec_.actions));
  policy_ = register_module("policy", torch::nn::Linear(in, spec_.actions));
  value_ = register_module("value", torch::nn::Linear(in, 1));
}

ActorCriticOutput ActorCriticImpl::forward(const torch::Tensor& observations) {
  const torch::Tensor features = trunk_->forward(observations);
  return {policy_->forward(features), value_->forward(features).squeeze(-1)};
}

std::int64_t parameter_count(ActorCritic& net) {
  std::int64_t n = 0;
  for (const auto& p : net->parameters()) n += p.numel();
  return n;
}

namespace {

std::vector<float> flatten(const std::vector<torch::Tensor>& tensors, bool gradients) {
  std::vector<float> out;
  for (const auto& p : tensors) {
    const torch::Tensor source = gradients ? p.grad() : p;
    if (!source.defined()) {
      out.insert(out.end(), static_cast<std::size_t>(p.numel()), 0.0f);
      continue;
    }
    const torch::Tensor c = source.detach().to(torch::kFloat).contiguous().cpu();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

void check_length(ActorCritic& net, const std::vector<float>& values, const char* what) {
  if (static_cast<std::int64_t>(values.size()) != parameter_count(net))
    throw std::invalid_argument(std::string("actor-critic: ") + what + ": expected " + std::to_string(parameter_count(net)) +
                                " values, got " + std::to_string(values.size()));
}

}  // namespace

std::vector<float> flat_parameters(ActorCritic& net) { return flatten(net->parameters(), false); }
std::vector<float> flat_gradients(ActorCritic& net) { return flatten(net->parameters(), true); }

void set_flat_parameters(ActorCritic& net, const std::vector<float>& values) {
  check_length(net, values, "set_flat_parameters");
  torch::NoGradGuard no_grad;
  std::size_t offset = 0;
  for (auto& p : net->parameters()) {
    const auto n = static_cast<std::size_t>(p.numel());
    p.copy_(torch::from_blob(const_cast<float*>(values.data() + offset), p.sizes(), torch::kFloat));
    offset += n;
  }
}

void set_flat_gradients(ActorCritic& net, const std::vector<float>& values) {
  check_length(net, values, "set_flat_gradients");
  std::size_t offset = 0;
  for (auto& p : net->parameters()) {
    const auto n = static_cast<std::size_t>(p.numel());
    p.mutable_grad() = torch::from_blob(const_cast<float*>(values.data() + offset), p.sizes(), torch::kFloat).clone();
    offset += n;
  }
}

void copy_parameters(ActorCritic& from, ActorCritic& to) { set_flat_parameters(to, flat_parameters(from)); }

}  // namespace agents
