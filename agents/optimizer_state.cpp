#include "agents/optimizer_state.hpp"

#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace agents {
namespace {

using torch::optim::AdamParamState;
using torch::optim::RMSpropParamState;

// The key of a parameter's state in optimizer.state(): its TensorImpl's address, as text in
// libtorch 1.13 (written with operator<<, as c10::guts::to_string does), as the pointer itself in
// later versions.
template <class StateMap>
auto state_key(const torch::Tensor& parameter) {
  using Key = typename std::decay_t<StateMap>::key_type;
  void* address = parameter.unsafeGetTensorImpl();
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;
    text << address;
    return text.str();
  } else {
    return static_cast<Key>(address);
  }
}

std::vector<torch::Tensor> parameters_of(const torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> all;
  for (const auto& group : optimizer.param_groups()) all.insert(all.end(), group.params().begin(), group.params().end());
  return all;
}

void write_if_defined(torch::serialize::OutputArchive& archive, const std::string& key, const torch::Tensor& t) {
  if (t.defined()) archive.write(key, t);
}

torch::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key, const torch::Tensor& parameter, bool required,
                          std::size_t index) {
  torch::Tensor t;
  if (!archive.try_read(key, t)) {
    if (required) throw std::invalid_argument("parameter " + std::to_string(index) + "'s state has no " + key);
    return {};
  }
  if (t.sizes() != parameter.sizes() || t.scalar_type() != parameter.scalar_type())
    throw std::invalid_argument("parameter " + std::to_string(index) + "'s " + key + " is of another shape or type than the parameter");
  return t;
}

std::int64_t read_step(torch::serialize::InputArchive& archive, std::size_t index) {
  c10::IValue step;
  if (!archive.try_read("step", step) || !step.isInt() || step.toInt() < 0)
    throw std::invalid_argument("parameter " + std::to_string(index) + "'s state has no step count");
  return step.toInt();
}

}  // namespace

void save_optimizer_state(const torch::optim::Optimizer& optimizer, torch::serialize::OutputArchive& archive) {
  const std::vector<torch::Tensor> parameters = parameters_of(optimizer);
  archive.write("parameters", c10::IValue(static_cast<std::int64_t>(parameters.size())));
  const auto& states = optimizer.state();
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    torch::serialize::OutputArchive entry;
    const auto found = states.find(state_key<decltype(states)>(parameters[i]));
    if (found == states.end()) {
      entry.write("kind", c10::IValue(std::string("none")));  // no step taken yet
    } else if (const auto* adam = dynamic_cast<const AdamParamState*>(found->second.get())) {
      entry.write("kind", c10::IValue(std::string("adam")));
      entry.write("step", c10::IValue(adam->step()));
      entry.write("exp_avg", adam->exp_avg());
      entry.write("exp_avg_sq", adam->exp_avg_sq());
      write_if_defined(entry, "max_exp_avg_sq", adam->max_exp_avg_sq());
    } else if (const auto* rms = dynamic_cast<const RMSpropParamState*>(found->second.get())) {
      entry.write("kind", c10::IValue(std::string("rmsprop")));
      entry.write("step", c10::IValue(rms->step()));
      entry.write("square_avg", rms->square_avg());
      write_if_defined(entry, "momentum_buffer", rms->momentum_buffer());
      write_if_defined(entry, "grad_avg", rms->grad_avg());
    } else {
      throw std::logic_error("save_optimizer_state: the state of an optimizer other than Adam or RMSprop");
    }
    archive.write(std::to_string(i), entry);
  }
}

void load_optimizer_state(torch::optim::Optimizer& optimizer, torch::serialize::InputArchive& archive) {
  const std::vector<torch::Tensor> parameters = parameters_of(optimizer);
  c10::IValue count;
  if (!archive.try_read("parameters", count) || !count.isInt() || count.toInt() != static_cast<std::int64_t>(parameters.size()))
    throw std::invalid_argument("the optimizer state is of another number of parameters");
  const bool adam = dynamic_cast<torch::optim::Adam*>(&optimizer) != nullptr;
  const bool rmsprop = dynamic_cast<torch::optim::RMSprop*>(&optimizer) != nullptr;
  auto& states = optimizer.state();
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const torch::Tensor& p = parameters[i];
    torch::serialize::InputArchive entry;
    if (!archive.try_read(std::to_string(i), entry)) throw std::invalid_argument("no optimizer state for parameter " + std::to_string(i));
    c10::IValue kind;
    if (!entry.try_read("kind", kind) || !kind.isString()) throw std::invalid_argument("parameter " + std::to_string(i) + "'s state has no kind");
    const std::string k = kind.toStringRef();
    const auto key = state_key<decltype(states)>(p);
    if (k == "none") {
      states.erase(key);
    } else if (k == "adam" && adam) {
      auto s = std::make_unique<AdamParamState>();
      s->step(read_step(entry, i));
      s->exp_avg(read_tensor(entry, "exp_avg", p, true, i));
      s->exp_avg_sq(read_tensor(entry, "exp_avg_sq", p, true, i));
      s->max_exp_avg_sq(read_tensor(entry, "max_exp_avg_sq", p, false, i));
      states[key] = std::move(s);
    } else if (k == "rmsprop" && rmsprop) {
      auto s = std::make_unique<RMSpropParamState>();
      s->step(read_step(entry, i));
      s->square_avg(read_tensor(entry, "square_avg", p, true, i));
      s->momentum_buffer(read_tensor(entry, "momentum_buffer", p, false, i));
      s->grad_avg(read_tensor(entry, "grad_avg", p, false, i));
      states[key] = std::move(s);
    } else {
      throw std::invalid_argument("the optimizer state is " + k + "'s, this config's optimizer is " +
                                  (adam ? "adam" : rmsprop ? "rmsprop" : "another"));
    }
  }
}

}  // namespace agents
