// A policy file (agents/policy_file.hpp) from Python: `orchestra._core.Policy`, which
// orchestra.load_policy returns. predict(obs, deterministic=True) is the action of the agent the
// `orchestra-a3c` controller deploys (agents::GreedyBarrierAgent: the network's most probable
// move); deterministic=False draws it from the network's probabilities as
// agents::SampledBarrierAgent does (`actions: sampled`), from the policy's own generator (seeded by
// load_policy's `seed`). Actions are the environment's: Discrete(3) indices 0, 1, 2 for moves -1,
// 0, +1 of T, so that env.step(policy.predict(obs)) runs the controller's choice.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "agents/greedy_barrier_agent.hpp"
#include "agents/policy_file.hpp"
#include "common/errors.hpp"
#include "common/limits.hpp"
#include "experiments/python/bindings.hpp"
#include "experiments/python/torch_generator_guard.hpp"
#include "experiments/registry/a3c_policy.hpp"
#include "orchestra/barrier_env.hpp"

namespace experiments::python {

namespace py = pybind11;

namespace {

const char* spelling(orchestra::BarrierMove move) { return move == orchestra::BarrierMove::Multiplicative ? "multiplicative" : "additive"; }
const char* spelling(orchestra::DecisionInterval interval) { return interval == orchestra::DecisionInterval::Rounds ? "rounds" : "epoch"; }

class PythonPolicy {
 public:
  PythonPolicy(const std::string& path, std::optional<std::int64_t> seed) : path_(checked_path(path, "load_policy")) {
    if (seed && *seed < 0) throw py::value_error("load_policy: seed must be >= 0, got " + std::to_string(*seed));
    try {
      // The network is built (and randomly initialized) before its weights are read.
      policy_ = std::make_unique<agents::A3cPolicy>(with_torch_generator("load_policy", [&] { return agents::A3cPolicy::load(path); }));
    } catch (const common::Error&) {
      throw;
    } catch (const std::runtime_error& e) {  // a missing file or another layout: the user's input
      throw common::DataError(e.what());
    }
    // The controller's agents over the same network (A3cPolicy shares its module).
    greedy_ = std::make_unique<agents::GreedyBarrierAgent>(*policy_);
    std::random_device entropy;
    rng_.seed(seed ? static_cast<std::uint64_t>(*seed) : (static_cast<std::uint64_t>(entropy()) << 32 | entropy()));
  }

  // One observation [observation_size] -> an int; several [n, observation_size] -> int64 [n].
  py::object predict(const py::array_t<float, py::array::c_style | py::array::forcecast>& observations, bool deterministic) {
    const auto rows = split(observations, "predict");
    std::vector<std::int64_t> actions;
    for (const auto& row : rows) {
      const int move = deterministic ? greedy_->act(row) : policy_->predict(row, false, &rng_);
      actions.push_back(orchestra::index_of(move, policy_->control().max_move));
    }
    if (observations.ndim() == 1) return py::int_(actions[0]);
    return py::array_t<std::int64_t>(static_cast<py::ssize_t>(actions.size()), actions.data());
  }

  // pi(.|s) over the action indices (0, 1, 2 for moves -1, 0, +1): [actions] for one observation,
  // [n, actions] for several.
  py::array_t<double> probabilities(const py::array_t<float, py::array::c_style | py::array::forcecast>& observations) {
    const auto rows = split(observations, "probabilities");
    std::vector<double> out;
    for (const auto& row : rows) {
      const auto p = policy_->probabilities(row);
      out.insert(out.end(), p.begin(), p.end());
    }
    if (observations.ndim() == 1) return py::array_t<double>(static_cast<py::ssize_t>(out.size()), out.data());
    const auto actions = static_cast<py::ssize_t>(policy_->network()->spec().actions);
    return py::array_t<double>({static_cast<py::ssize_t>(rows.size()), actions}, out.data());
  }

  // The network's parameters by name (the names and shapes of agents/policy_file.hpp's state_dict).
  py::dict state_dict() {
    py::dict out;
    for (const auto& item : policy_->network()->named_parameters()) {
      const torch::Tensor t = item.value().detach().to(torch::kCPU, torch::kFloat).contiguous();
      std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
      out[py::str(item.key())] = py::array_t<float>(shape, t.data_ptr<float>());
    }
    return out;
  }

  // How the policy's actions move T, as the keys of a training config's `controller:` (what
  // `orchestra-a3c` deploys): BarrierEnv(config, controller=policy.controller) applies its actions
  // as in its training. Only the keys of its move and interval (a factor for a multiplicative move,
  // a unit for an additive one; interval_rounds for `rounds`), which a config refuses otherwise.
  py::dict controller() const {
    const agents::PolicyControl& c = policy_->control();
    py::dict out;
    out["move"] = spelling(c.move);
    if (c.move == orchestra::BarrierMove::Multiplicative)
      out["factor"] = c.factor;
    else
      out["unit_ms"] = c.unit_ms;
    out["max_move"] = c.max_move;
    out["interval"] = spelling(c.interval);
    if (c.interval == orchestra::DecisionInterval::Rounds) out["interval_rounds"] = c.interval_rounds;
    out["min_T_ms"] = c.min_barrier_ms;
    out["max_T_ms"] = c.max_barrier_ms;
    out["min_T_x_start"] = c.min_barrier_x_start;
    out["max_T_x_start"] = c.max_barrier_x_start;
    out["floor_cap_steps"] = c.floor_cap_steps;
    out["min_T_steps"] = c.min_barrier_steps;
    out["T_cap_steps"] = c.lcm_cap_steps;
    out["T_cap_x_comm"] = c.lcm_cap_x_comm;
    out["T_cap_above_steps"] = c.lcm_cap_above_steps;
    out["weighting"] = env::weighting_name(c.weighting);
    out["state"] = orchestra::state_features_name(c.state_features);
    return out;
  }

  // Where `orchestra-a3c` starts T when deploying this file: "lcm" (LCM's T*) or "planned" (the
  // static T planned-t plans on the surrogate of training). Not a training key: BarrierEnv starts at
  // LCM's T*, as training does.
  std::string start() const { return agents::barrier_start_name(policy_->control().start); }

  const std::string& path() const { return path_; }
  int observation_size() const { return policy_->observation_size(); }
  std::vector<int> hidden() { return policy_->network()->spec().hidden; }
  std::int64_t updates() const { return policy_->updates(); }
  const std::map<std::string, std::string>& training() const { return policy_->training(); }

 private:
  // The rows of a [size] or [n, size] float array, checked against the network's input.
  std::vector<std::vector<float>> split(const py::array_t<float, py::array::c_style | py::array::forcecast>& a, const char* what) const {
    const auto size = static_cast<py::ssize_t>(observation_size());
    const bool one = a.ndim() == 1 && a.shape(0) == size;
    const bool many = a.ndim() == 2 && a.shape(1) == size && a.shape(0) >= 1;
    if (!one && !many) {
      std::string shape = "(";
      for (py::ssize_t d = 0; d < a.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(a.shape(d));
      throw py::value_error(std::string("Policy.") + what + ": expected an observation of shape (" + std::to_string(size) +
                            ",) or a batch (n, " + std::to_string(size) + "), got shape " + shape + (a.ndim() == 1 ? ",)" : ")"));
    }
    const py::ssize_t n = one ? 1 : a.shape(0);
    std::vector<std::vector<float>> rows;
    for (py::ssize_t r = 0; r < n; ++r) rows.emplace_back(a.data() + r * size, a.data() + (r + 1) * size);
    // A NaN would come out as some action (the first, or a sampled one) as if it meant one.
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t k = 0; k < rows[r].size(); ++k)
        if (!std::isfinite(rows[r][k]))
          throw py::value_error(std::string("Policy.") + what + ": the observation's entry " + std::to_string(k) + (n > 1 ? " in row " + std::to_string(r) : "") +
                                " is not a finite number (" + std::to_string(rows[r][k]) + ")");
    return rows;
  }

  std::string path_;
  std::unique_ptr<agents::A3cPolicy> policy_;
  std::unique_ptr<agents::GreedyBarrierAgent> greedy_;
  std::mt19937_64 rng_;
};

}  // namespace

void bind_policy(py::module_& m) {
  py::class_<PythonPolicy>(m, "Policy", "A trained barrier policy (a policy.pt of `orchestra train`).")
      .def(py::init<const std::string&, std::optional<std::int64_t>>(), py::arg("path"), py::arg("seed") = py::none())
      .def("predict", &PythonPolicy::predict, py::arg("observation"), py::arg("deterministic").noconvert() = true)
      .def("probabilities", &PythonPolicy::probabilities, py::arg("observation"))
      .def("state_dict", &PythonPolicy::state_dict)
      .def_property_readonly("controller", &PythonPolicy::controller)
      .def_property_readonly("start", &PythonPolicy::start)
      .def_property_readonly("path", &PythonPolicy::path)
      .def_property_readonly("observation_size", &PythonPolicy::observation_size)
      .def_property_readonly("hidden", &PythonPolicy::hidden)
      .def_property_readonly("updates", &PythonPolicy::updates)
      .def_property_readonly("training", &PythonPolicy::training);
  m.attr("PRETRAINED_POLICY") = pretrained_policy_path();
}

}  // namespace experiments::python
