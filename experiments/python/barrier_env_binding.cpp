// The environment `orchestra train` trains on, stepped from Python (`orchestra._core.BarrierEnv`;
// the Gymnasium class around it is orchestra/_env.py). It is built exactly as an agent's is: the
// training config read by load_train_config (the file's keys, then the keyword overrides), then
// make_training_env(config, index): the same environment, observation (orchestra/rl_state.hpp),
// reward and episode ends as the C++ environment, step for step (tests/python/ compares them).
//
// Seeding (Gymnasium's reset(seed=...) contract on the C++ environment's reset(seed)):
//   reset(seed=s)  runs the C++ reset(s), and makes s the stream of the episodes that follow;
//   reset()        runs reset(episode_seed(s, e)) for the e-th episode since (e = 1, 2, ...: the
//                  rule of orchestra/vector_barrier_env.hpp); before any seed was given, s is drawn
//                  from std::random_device (Gymnasium's unseeded start). info["seed"] is always the
//                  seed the episode ran with, so any episode can be run again.
//
// Threads: reset and step release the GIL, so environments in several Python threads run at once.
// One environment is used by one thread at a time: a second thread calling it meanwhile gets a
// RuntimeError, not a wait. Resets take a process-wide lock, because building an episode's replicas
// seeds libtorch's global generator (env/train/replicas.cpp), which Debian's python3-torch shares
// with this module; the generator's state is put back afterwards, so a reset does not change what
// the user's own torch.rand draws next (torch_generator_guard.hpp). What the lock cannot order: the
// user's draws from the global generator in another thread, and orchestra.run (which holds no lock:
// it may take hours) in another thread; either interleaves with a reset's seeding (README).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "common/errors.hpp"
#include "common/limits.hpp"
#include "common/yaml_file.hpp"
#include "env/train/compute_threads.hpp"
#include "experiments/python/bindings.hpp"
#include "experiments/python/torch_generator_guard.hpp"
#include "experiments/python/yaml_overrides.hpp"
#include "experiments/runner/train_config.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/rl_state.hpp"
#include "orchestra/vector_barrier_env.hpp"

namespace experiments::python {

namespace py = pybind11;

namespace {

// The keys of a training config that name files: those in the file are relative to the file's
// folder; those given as keywords are relative to the current directory, as Python's open() is, and
// are made absolute here before they meet the file's. `experiments` and `focus.files` are lists of
// files, `surrogate` (environment: surrogate, issue 41) and `a3c.init_policy` one file each.
void anchor_paths(YAML::Node& overrides) {
  const auto anchor = [](YAML::Node node) {
    if (!node.IsScalar()) return;
    const std::filesystem::path p = node.Scalar();
    if (p.is_relative()) node = std::filesystem::absolute(p).lexically_normal().string();
  };
  if (YAML::Node list = overrides["experiments"]; list && list.IsSequence())
    for (std::size_t i = 0; i < list.size(); ++i) anchor(list[i]);
  if (YAML::Node file = overrides["surrogate"]) anchor(file);
  if (YAML::Node a3c = overrides["a3c"]; a3c && a3c.IsMap())
    if (YAML::Node file = a3c["init_policy"]) anchor(file);
  if (YAML::Node focus = overrides["focus"]; focus && focus.IsMap())
    if (YAML::Node files = focus["files"]; files && files.IsSequence())
      for (std::size_t i = 0; i < files.size(); ++i) anchor(files[i]);
}

// A config error about a keyword's value names the keyword instead of the file: override nodes
// carry no line (yaml_overrides.hpp), so such a message reads "PATH: key...".
std::string name_the_keyword(const std::string& message, const std::string& path, const YAML::Node& overrides) {
  const std::string prefix = path + ": ";
  if (message.rfind(prefix, 0) != 0) return message;
  const std::string rest = message.substr(prefix.size());
  for (const auto& entry : overrides) {
    const std::string key = entry.first.Scalar();
    if (rest.rfind(key, 0) == 0 && rest.size() > key.size() && std::string(":.[").find(rest[key.size()]) != std::string::npos)
      return "BarrierEnv(" + key + "=...): " + rest;
  }
  return message;
}

py::array_t<float> to_array(const std::vector<float>& values) {
  py::array_t<float> out(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

double gbps(const env::LinkSpec& link) { return link.bytes_per_ms * 8.0 / 1e6; }

// The episode's cluster, for info["cluster"]: what the controller was started on (with a
// `clusters:` distribution, the one drawn for this episode).
py::dict describe_cluster(const orchestra::LocalSgdBarrierEnv& env) {
  const env::ClusterSpec& cluster = env.cluster();
  py::list workers;
  const auto& batch_ms = env.controller().batch_times_ms();
  for (std::size_t i = 0; i < cluster.workers.size(); ++i) {
    const env::WorkerSpec& w = cluster.workers[i];
    py::dict worker;
    worker["name"] = w.name;
    worker["server"] = cluster.server_names.at(static_cast<std::size_t>(w.server));
    worker["max_batch"] = w.max_batch;
    worker["noise"] = w.noise;
    worker["batch"] = env.controller().batch_sizes().at(i);
    worker["batch_ms"] = batch_ms.at(i);  // t_b^n as probed at the start
    workers.append(worker);
  }
  py::dict network;
  network["bandwidth_gbps"] = gbps(env.network().inter_server);
  network["latency_us"] = env.network().inter_server.alpha_ms * 1000.0;
  network["intra_bandwidth_gbps"] = gbps(env.network().intra_server);
  network["intra_latency_us"] = env.network().intra_server.alpha_ms * 1000.0;
  network["message_mb"] = env.network().message_bytes / 1e6;
  py::dict out;
  out["workers"] = workers;
  out["servers"] = cluster.server_names;
  out["network"] = network;
  out["comm_ms"] = env.controller().comm_ms();
  out["start_barrier_ms"] = env.controller().start_barrier_ms();
  out["min_barrier_ms"] = env.controller().min_barrier_ms();
  out["max_barrier_ms"] = env.controller().max_barrier_ms();
  return out;
}

class PythonBarrierEnv {
 public:
  PythonBarrierEnv(std::optional<std::string> config_path, const py::dict& overrides, std::int64_t index,
                   std::optional<int> threads)
      : index_(index) {
    if (index < 0) throw py::value_error("BarrierEnv: index must be >= 0, got " + std::to_string(index));
    if (threads && (*threads < 1 || *threads > 256))
      throw py::value_error("BarrierEnv: threads must be in 1..256, got " + std::to_string(*threads));
    YAML::Node extra = to_yaml(overrides, "BarrierEnv");
    anchor_paths(extra);
    const std::string path = config_path ? checked_path(*config_path, "BarrierEnv: config") : "BarrierEnv";
    py::gil_scoped_release release;
    YAML::Node root(YAML::NodeType::Map);
    if (config_path) {
      root = common::read_yaml_file(path);
      if (!root.IsMap()) throw common::ConfigError(path + ": expected a mapping with keys like environment:, experiments:, a3c:");
    }
    try {
      const YAML::Node merged = merge_overrides(root, extra);
      config_ = load_train_config(merged, path);
      environment_ = merged["environment"] ? merged["environment"].Scalar() : "local-sgd";
      if (threads) env::set_compute_threads(*threads);
      env_ = make_training_env(config_, index);
      max_move_ = env_->max_move();
      observation_size_ = env_->observation_size();
    } catch (const common::ConfigError& e) {
      throw common::ConfigError(name_the_keyword(e.what(), path, extra));
    }
  }

  // Any uint64: the seeds of continued episodes (episode_seed) use all 64 bits, and info["seed"]
  // must run its episode again.
  py::tuple reset(std::optional<std::uint64_t> seed) {
    Use use(*this, "reset");
    if (seed) {
      stream_ = *seed;
      episode_ = 0;
      episode_seed_ = stream_;
    } else if (!started_) {
      std::random_device entropy;
      stream_ = (static_cast<std::uint64_t>(entropy()) << 32 | entropy()) & static_cast<std::uint64_t>(common::kMaxSeed);
      episode_ = 0;
      episode_seed_ = stream_;
    } else {
      ++episode_;
      episode_seed_ = orchestra::episode_seed(stream_, episode_);
    }
    started_ = true;
    orchestra::ResetResult result;
    {
      py::gil_scoped_release release;
      result = with_torch_generator("BarrierEnv.reset", [&] { return env_->reset(episode_seed_); });
    }
    over_ = false;
    cluster_ = py::none();
    if (const auto* local = dynamic_cast<const orchestra::LocalSgdBarrierEnv*>(env_.get())) cluster_ = describe_cluster(*local);
    return py::make_tuple(to_array(result.observation), info(result.info));
  }

  py::tuple step(const py::handle& action) {
    Use use(*this, "step");
    if (!started_) throw std::runtime_error("BarrierEnv.step: call reset() first");
    const int move = move_of(action);
    orchestra::StepResult result;
    {
      py::gil_scoped_release release;
      result = env_->step(move);
    }
    over_ = result.terminated || result.truncated;
    return py::make_tuple(to_array(result.observation), result.reward, result.terminated, result.truncated, info(result.info));
  }

  int observation_size() const { return observation_size_; }  // known after close() as well
  // The moves of Discrete(2m + 1)'s indices: (-1, 0, +1) for the paper's actions, -m ... +m with
  // the controller's max_move m (orchestra/barrier_env.hpp).
  py::tuple action_moves() const {
    py::list moves;
    for (int m = -max_move_; m <= max_move_; ++m) moves.append(m);
    return py::tuple(moves);
  }

  // The observation's bounds: every environment but the toy observes the controller's state
  // (rl_state.hpp), with its bounds; the toy's entries have none it declares.
  std::pair<std::vector<float>, std::vector<float>> bounds() const {
    if (config_.environment != TrainEnvironment::Toy) {
      const orchestra::StateBounds b = orchestra::state_bounds(config_.control.state_features);
      return {b.low, b.high};
    }
    const auto n = static_cast<std::size_t>(observation_size_);
    const float inf = std::numeric_limits<float>::infinity();
    return {std::vector<float>(n, -inf), std::vector<float>(n, inf)};
  }

  // As the config spells it ("local-sgd", "toy", and any environment the reader adds), so that a
  // new one needs no change here; the reader's default when the key is absent.
  const std::string& environment() const { return environment_; }
  std::string experiment() const {
    if (config_.experiments.empty()) return "";
    return config_.experiments[static_cast<std::size_t>(index_) % config_.experiments.size()];
  }
  const TrainConfig& config() const { return config_; }
  std::int64_t index() const { return index_; }
  bool episode_over() const { return over_; }

  void close() {  // idempotent, as Gymnasium's close()
    Use use(*this, "close", /*needs_open=*/false);
    env_.reset();
  }
  bool closed() const { return !env_; }

 private:
  // One thread in the environment at a time, said at once rather than waited for.
  class Use {
   public:
    Use(PythonBarrierEnv& env, const char* what, bool needs_open = true) : lock_(env.busy_, std::try_to_lock) {
      if (!lock_.owns_lock())
        throw std::runtime_error(std::string("BarrierEnv.") + what +
                                 ": another thread is inside this environment; step each environment from one thread "
                                 "(make one environment per thread)");
      if (needs_open && !env.env_) throw std::runtime_error(std::string("BarrierEnv.") + what + ": the environment is closed");
    }

   private:
    std::unique_lock<std::mutex> lock_;
  };

  // Gymnasium's Discrete(2m + 1) index (0 ... 2m) -> the C++ environment's move (-m ... +m), in the
  // order of the policy network's outputs (orchestra/barrier_env.hpp).
  int move_of(const py::handle& action) const {
    const int reach = max_move_, last = 2 * reach;
    const std::string expected = reach == 1 ? "0, 1 or 2 (decrease, keep or increase T)"
                                            : "in 0 ... " + std::to_string(last) + " (moves -" + std::to_string(reach) + " ... +" +
                                                  std::to_string(reach) + " of T)";
    // True and False are integers to Python (step(True) was action 1): a flag where a move belongs
    // is a mistake, refused as a non-integer is.
    PyObject* index = PyBool_Check(action.ptr()) ? nullptr : PyNumber_Index(action.ptr());
    if (index == nullptr) {
      PyErr_Clear();
      throw py::type_error("BarrierEnv.step: the action must be an integer " + expected + ", got " + py::repr(action).cast<std::string>());
    }
    const long long value = PyLong_AsLongLong(index);
    Py_DECREF(index);
    if (PyErr_Occurred()) PyErr_Clear();
    if (value < 0 || value > last)
      throw py::value_error("BarrierEnv.step: the action must be " + expected + ", got " + py::repr(action).cast<std::string>());
    return orchestra::action_from_index(static_cast<int>(value), reach);
  }

  py::dict info(const orchestra::StepInfo& i) const {
    py::dict out;
    out["epoch"] = i.epoch;
    out["rounds"] = i.rounds;
    out["barrier_ms"] = i.barrier_ms;
    out["step_ms"] = i.step_ms;
    out["clock_ms"] = i.clock_ms;
    out["accuracy"] = i.accuracy;
    out["loss"] = i.loss;
    out["evaluated"] = i.evaluated;
    out["reached_target"] = i.reached_target;
    out["seed"] = episode_seed_;
    out["episode"] = episode_;
    out["cluster"] = cluster_;
    return out;
  }

  TrainConfig config_;
  std::string environment_;
  std::unique_ptr<orchestra::BarrierEnv> env_;
  int max_move_ = 1;
  int observation_size_ = 0;
  std::int64_t index_ = 0;
  std::mutex busy_;
  bool started_ = false;
  bool over_ = false;
  std::uint64_t stream_ = 0;
  std::uint64_t episode_ = 0;
  std::uint64_t episode_seed_ = 0;
  py::object cluster_ = py::none();
};

}  // namespace

void bind_barrier_env(py::module_& m) {
  py::class_<PythonBarrierEnv>(m, "BarrierEnv",
                               "The C++ environment of `orchestra train` (orchestra.BarrierEnv is the Gymnasium class "
                               "around it).")
      .def(py::init<std::optional<std::string>, const py::dict&, std::int64_t, std::optional<int>>(), py::arg("config"),
           py::arg("overrides"), py::arg("index") = 0, py::arg("threads") = py::none())
      .def("reset", &PythonBarrierEnv::reset, py::arg("seed") = py::none())
      .def("step", &PythonBarrierEnv::step, py::arg("action"))
      .def("close", &PythonBarrierEnv::close)
      .def_property_readonly("closed", &PythonBarrierEnv::closed)
      .def_property_readonly("observation_size", &PythonBarrierEnv::observation_size)
      .def_property_readonly("action_moves", &PythonBarrierEnv::action_moves)
      .def_property_readonly("bounds", &PythonBarrierEnv::bounds)
      .def_property_readonly("environment", &PythonBarrierEnv::environment)
      .def_property_readonly("experiment", &PythonBarrierEnv::experiment)
      .def_property_readonly("index", &PythonBarrierEnv::index)
      .def_property_readonly("episode_over", &PythonBarrierEnv::episode_over)
      .def_property_readonly("name", [](const PythonBarrierEnv& e) { return e.config().name; })
      .def_property_readonly("training_info", [](const PythonBarrierEnv& e) { return e.config().training_info; })
      .def_property_readonly("file", [](const PythonBarrierEnv& e) { return e.config().file; });
  m.attr("ACTION_MOVES") = py::make_tuple(-1, 0, 1);
  m.def(
      "set_threads",
      [](int threads) {
        if (threads < 1 || threads > 256) throw py::value_error("set_threads: threads must be in 1..256, got " + std::to_string(threads));
        env::set_compute_threads(threads);
      },
      py::arg("threads"));
}

}  // namespace experiments::python
