#include "experiments/config/config.hpp"
#include "experiments/config/workload_surrogate.hpp"

#include "env/surrogate/surrogate_file.hpp"
#include "env/train/replica_memory.hpp"
#include "env/train/workload_task.hpp"

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

#include "common/errors.hpp"
#include "common/limits.hpp"
#include "common/names.hpp"
#include "common/yaml_file.hpp"
#include "common/yaml_reader.hpp"
#include "env/train/dataset_registry.hpp"
#include "env/sim/perturbation_trace.hpp"
#include "env/sim/step_trace.hpp"

namespace experiments {
namespace {

using common::kMaxCount;
constexpr double kHuge = std::numeric_limits<double>::max();

// A path in a config is relative to the config's folder.
std::string relative_to_config(const std::string& config_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(config_file).parent_path() / p).string();
}

env::DataSpec read_data(common::YamlReader& r) {
  env::DataSpec d;
  d.dataset = r.choice("dataset", d.dataset, env::dataset_names());
  const env::DatasetKind& kind = env::dataset_kind(d.dataset);
  // An empty path is the default (what a resolved config records for a data set that reads no
  // files): anchored, it became the config's folder, and a calibrated copy another experiment.
  d.path = r.text("path", kind.default_path);
  if (d.path.empty()) d.path = kind.default_path;
  if (kind.reads_files && d.path.empty()) r.fail("path", "dataset '" + d.dataset + "' needs a path to the folder holding its files");
  if (r.given("path") && !d.path.empty()) {  // read from the config's folder, as traces and policy files are, wherever the command runs
    d.path = std::filesystem::path(relative_to_config(r.file(), d.path)).lexically_normal().string();
    r.resolved()["path"] = d.path;
  }
  d.train_limit = r.integer("train_limit", 0, 0, kMaxCount);
  d.test_limit = r.integer("test_limit", 0, 0, kMaxCount);
  common::YamlReader s = r.child("synthetic");
  d.synthetic_train = s.integer("train", d.synthetic_train, 1, kMaxCount);
  d.synthetic_test = s.integer("test", d.synthetic_test, 1, kMaxCount);
  d.synthetic_channels = static_cast<int>(s.integer("channels", d.synthetic_channels, 1, 16));
  d.synthetic_side = static_cast<int>(s.integer("side", d.synthetic_side, 4, 256));
  d.synthetic_noise = s.real("noise", d.synthetic_noise, 0, 100);
  s.reject_unknown_keys();
  r.resolved()["synthetic"] = s.resolved();
  r.reject_unknown_keys();
  return d;
}

env::ModelSpec read_model(common::YamlReader& r) {
  env::ModelSpec m;
  m.arch = r.choice("arch", m.arch, env::model_names());
  const auto hidden = r.integers("hidden", {256, 128}, 1, 1 << 16);
  m.hidden.assign(hidden.begin(), hidden.end());
  m.resnet_blocks = static_cast<int>(r.integer("resnet_blocks", 1, 1, 18));
  m.resnet_width = static_cast<int>(r.integer("resnet_width", 16, 1, 512));
  r.reject_unknown_keys();
  return m;
}

// A worker whose time_model is a trace (env/sim/step_trace.hpp); read once every worker's name is known.
struct PendingTrace {
  std::size_t first_worker = 0, count = 0;
  std::string path;
  YAML::Node source;
  std::string key_path;
};

std::shared_ptr<const env::BatchTimeModel> read_time_model(common::YamlReader& r, int max_batch) {
  const bool has_coefficients = r.has("coefficients"), has_points = r.has("points");
  if (has_coefficients == has_points) r.fail(has_points ? "points" : "coefficients", "give exactly one of coefficients, points or trace");
  std::shared_ptr<const env::BatchTimeModel> model;
  if (has_coefficients) {
    // Each coefficient within a step's time keeps every power of B finite up to kMaxBatch.
    const auto c = r.reals("coefficients", -common::kStepMs.max, common::kStepMs.max);
    if (c.empty() || c.size() > 4) r.fail("coefficients", "expected 1 to 4 coefficients a0..a3 in ms, got " + std::to_string(c.size()));
    model = std::make_shared<env::BatchTimeModel>(c, max_batch);
    if (const std::string problem = env::given_model_problem(*model, max_batch); !problem.empty()) r.fail("coefficients", problem);
  } else {
    const YAML::Node points = r.raw("points");
    if (!points.IsSequence() || points.size() < 2) r.fail("points", "expected a list of at least two [batch, ms] pairs");
    std::vector<env::BatchTimePoint> pts;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const YAML::Node p = points[i];
      double b = 0, ms = 0;
      const std::string path = r.key_path("points") + "[" + std::to_string(i) + "]";
      if (!p.IsSequence() || p.size() != 2) common::YamlReader::fail_at(p, r.file(), path, "expected a [batch, ms] pair");
      try {
        b = p[0].as<double>();
        ms = p[1].as<double>();
      } catch (const YAML::Exception&) {
        common::YamlReader::fail_at(p, r.file(), path, "expected two numbers");
      }
      if (!(b >= 1) || !(ms > 0) || b > static_cast<double>(common::kMaxBatch) || common::range_problem(ms, common::kStepMs))
        common::YamlReader::fail_at(p, r.file(), path, "expected batch >= 1 and <= " + std::to_string(common::kMaxBatch) + ", and ms > 0 and <= " +
                                                           std::to_string(static_cast<long long>(common::kStepMs.max)));
      pts.push_back({b, ms});
    }
    model = std::make_shared<env::BatchTimeModel>(env::BatchTimeModel::fit(pts, 3));
    r.resolved()["fitted_coefficients"] = model->coefficients();
    // A fit extrapolated below its smallest point can reach 0 and below (points [100, 1] and
    // [200, 101] are a line through -98 ms at a batch of 1), and a step must take some time: a
    // negative compute time gave negative utilizations. The model is monotone (its running
    // maximum from a batch of 1, eval()), so its smallest step is that of a batch of 1.
    if (const double smallest = model->eval(1); !(smallest > 0)) {
      std::ostringstream problem;
      problem << "the model fitted to these points gives " << smallest
              << " ms for a batch of 1; a step must take some time: add a point at a small batch, or give coefficients";
      r.fail("points", problem.str());
    }
    // The same bound as a trace's rows and a perturbation's add_ms: a step of the largest batch, as
    // the simulation times it (past the last point the model goes on linearly, eval()).
    if (const std::string problem = env::step_time_limit_problem(model->eval(max_batch), max_batch); !problem.empty())
      r.fail("points", problem);
  }
  r.reject_unknown_keys();
  return model;
}

int server_index(env::ClusterSpec& c, const std::string& name) {
  for (std::size_t i = 0; i < c.server_names.size(); ++i)
    if (c.server_names[i] == name) return static_cast<int>(i);
  c.server_names.push_back(name);
  return static_cast<int>(c.server_names.size()) - 1;
}

// The most workers a cluster may have: timing-only runs go to thousands; the bound keeps a typo
// (count: 1000000 on a server of 1000) from exhausting memory.
using common::kMaxWorkers;

// One worker entry; `count` > 1 replicates it as name-0, name-1, ... In a replicated server
// (`count` on the server) the names start with the server's: node-3.gpu-0.
void read_worker(const YAML::Node& node, const std::string& file, const std::string& path, const std::string& server,
                 const std::string& name_prefix, env::ClusterSpec& c, std::unordered_set<std::string>& names, nlohmann::json& out,
                 ClusterMode mode, std::vector<PendingTrace>& traces) {
  common::YamlReader w(node, file, path);
  if (!w.has("name")) w.fail("name", "every worker needs a name");
  const std::string given_name = w.name("name", "");
  const std::string name = name_prefix + given_name;
  const auto count = w.integer("count", 1, 1, kMaxWorkers);
  if (static_cast<std::int64_t>(c.workers.size()) + count > kMaxWorkers)
    w.fail("count", "the cluster would have more than " + std::to_string(kMaxWorkers) + " workers");
  const int max_batch = static_cast<int>(w.integer("max_batch", 1024, 1, common::kMaxBatch));
  const double noise = w.real("noise", 0.0, 0.0, 2.0);
  const std::string server_name = server.empty() ? w.name("server", "server0") : server;
  w.resolved()["server"] = server_name;
  if (!name_prefix.empty()) w.resolved()["name"] = name;
  common::YamlReader tm = w.child("time_model");
  // Real runs measure their step times, so a time model is optional there; the placeholder (1 ms
  // per step) only feeds the simulated preflight.
  const bool placeholder = mode == ClusterMode::Real && !w.has("time_model");
  if (!placeholder && !w.has("time_model")) w.fail("time_model", "required key is missing (coefficients: [a0, a1, ...] in ms, points: [[batch, ms], ...], or trace: FILE.csv)");
  const bool traced = tm.has("trace");
  if (traced) {
    if (tm.has("coefficients") || tm.has("points")) tm.fail("trace", "give exactly one of coefficients, points or trace");
    const std::string trace = tm.text("trace", "");
    if (trace.empty()) tm.fail("trace", "expected the path of a CSV file (columns clock_ms, batch, ms[, worker])");
    tm.reject_unknown_keys();
    traces.push_back({c.workers.size(), 0, relative_to_config(file, trace), tm.raw("trace"), tm.key_path("trace")});
  }
  // A traced worker's model is its trace's fitted line, set once the trace is read.
  auto model = placeholder || traced ? std::make_shared<const env::BatchTimeModel>(std::vector<double>{1.0}, max_batch) : read_time_model(tm, max_batch);
  if (!placeholder) w.resolved()["time_model"] = tm.resolved();
  w.reject_unknown_keys();
  const int s = server_index(c, server_name);
  for (std::int64_t k = 0; k < count; ++k) {
    env::WorkerSpec spec;
    spec.name = count > 1 ? name + "-" + std::to_string(k) : name;
    if (!names.insert(spec.name).second) w.fail("name", "duplicate worker name '" + spec.name + "'");
    spec.time_model = model;
    spec.max_batch = max_batch;
    spec.noise = noise;
    spec.server = s;
    c.workers.push_back(spec);
  }
  if (traced) traces.back().count = static_cast<std::size_t>(count);
  out.push_back(w.resolved());
}

env::Perturbation read_perturbation(common::YamlReader& r, const env::ClusterSpec& c) {
  env::Perturbation p;
  const std::string worker = r.text("worker", "");
  p.worker = -1;
  for (std::size_t i = 0; i < c.workers.size(); ++i)
    if (c.workers[i].name == worker) p.worker = static_cast<int>(i);
  if (p.worker < 0) r.fail("worker", "no worker named '" + worker + "' in the cluster");
  p.start_s = r.real("start_s", 0.0, common::kClockS);
  // Absent: to the end, which config.json records as the largest double; read back, that value
  // means the same (`orchestra calibrate` reads a launched run's config.json).
  const YAML::Node end = r.has("end_s") ? YAML::Node(r.raw("end_s")) : YAML::Node();
  const bool to_the_end = !end || (end.IsScalar() && std::strtod(end.Scalar().c_str(), nullptr) == kHuge);
  p.end_s = to_the_end ? r.real("end_s", kHuge, 0.0, kHuge) : r.real("end_s", kHuge, common::kClockS);
  if (p.end_s <= p.start_s) r.fail("end_s", "must be after start_s");
  p.slowdown = r.real("slowdown", 1.0, common::kSlowdown);
  p.add_ms = r.real("add_ms", 0.0, common::kStepMs);
  p.period_s = r.real("period_s", 0.0, common::kClockS);
  p.active_s = r.real("active_s", p.period_s / 2, common::kClockS);
  if (p.period_s > 0 && p.active_s > p.period_s) r.fail("active_s", "must not exceed period_s");
  if (p.slowdown == 1.0 && p.add_ms == 0.0) r.fail("slowdown", "a perturbation needs slowdown != 1 or add_ms > 0");
  r.reject_unknown_keys();
  return p;
}

void read_traces(const std::vector<PendingTrace>& traces, env::ClusterSpec& c, const std::string& file) {
  std::set<std::string> names;
  for (const auto& w : c.workers) names.insert(w.name);
  for (const auto& t : traces)
    for (std::size_t k = t.first_worker; k < t.first_worker + t.count; ++k) {
      env::WorkerSpec& w = c.workers[k];
      try {
        w.trace = std::make_shared<const env::StepTrace>(env::StepTrace::read(t.path, w.name, names));
      } catch (const common::DataError& e) {
        common::YamlReader::fail_at(t.source, file, t.key_path, e.what());
      }
      w.time_model = w.trace->model();
    }
}

// `perturbations:` is a list of perturbations and {trace: FILE.csv} entries, or one {trace: FILE.csv}.
void read_perturbations(common::YamlReader& r, env::ClusterSpec& c) {
  const YAML::Node node = r.raw("perturbations");
  if (!node || node.IsNull()) return;
  std::vector<YAML::Node> entries;
  if (node.IsMap()) {
    entries.push_back(node);
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) entries.push_back(node[i]);
  } else {
    r.fail("perturbations", "expected a list of perturbations or {trace: FILE.csv}");
  }
  std::vector<std::string> names;
  for (const auto& w : c.workers) names.push_back(w.name);
  nlohmann::json resolved = nlohmann::json::array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string path = r.key_path("perturbations") + (node.IsMap() ? "" : "[" + std::to_string(i) + "]");
    common::YamlReader p(entries[i], r.file(), path);
    if (p.has("trace")) {
      const std::string trace = p.text("trace", "");
      p.reject_unknown_keys();
      try {
        for (const auto& q : env::read_perturbation_trace(relative_to_config(r.file(), trace), names)) c.perturbations.push_back(q);
      } catch (const common::DataError& e) {
        p.fail("trace", e.what());
      }
    } else {
      c.perturbations.push_back(read_perturbation(p, c));
    }
    resolved.push_back(p.resolved());
  }
  r.resolved()["perturbations"] = resolved;
}

env::ClusterSpec read_cluster(common::YamlReader& r, ClusterMode& mode, nlohmann::json& resolved_workers) {
  env::ClusterSpec c;
  std::vector<PendingTrace> traces;
  mode = r.option("mode", ClusterMode::Simulated, {{"simulated", ClusterMode::Simulated}, {"real", ClusterMode::Real}});
  const auto servers = r.sequence("servers");
  const auto workers = r.sequence("workers");
  if (servers.empty() == workers.empty()) r.fail(servers.empty() ? "workers" : "servers", "give the workers either as servers: [{name, workers: [...]}] or as a flat workers: list");
  resolved_workers = nlohmann::json::array();
  std::unordered_set<std::string> worker_names, server_names;
  for (std::size_t s = 0; s < servers.size(); ++s) {
    const std::string path = r.key_path("servers") + "[" + std::to_string(s) + "]";
    common::YamlReader sr(servers[s], r.file(), path);
    const std::string base_name = sr.name("name", "server" + std::to_string(s));
    // `count: N` replicates the server as name-0 .. name-(N-1), for cluster-scale what-if studies.
    const auto copies = sr.integer("count", 1, 1, kMaxWorkers);
    const auto list = sr.sequence("workers");
    if (list.empty()) sr.fail("workers", "a server needs at least one worker");
    for (std::int64_t k = 0; k < copies; ++k) {
      const std::string name = copies > 1 ? base_name + "-" + std::to_string(k) : base_name;
      if (!server_names.insert(name).second) sr.fail("name", "duplicate server name '" + name + "'");
      const std::string prefix = copies > 1 ? name + "." : "";
      for (std::size_t w = 0; w < list.size(); ++w)
        read_worker(list[w], r.file(), path + ".workers[" + std::to_string(w) + "]", name, prefix, c, worker_names, resolved_workers, mode, traces);
    }
    sr.reject_unknown_keys();
  }
  for (std::size_t w = 0; w < workers.size(); ++w)
    read_worker(workers[w], r.file(), r.key_path("workers") + "[" + std::to_string(w) + "]", "", "", c, worker_names, resolved_workers, mode, traces);
  read_traces(traces, c, r.file());
  read_perturbations(r, c);
  // What a real round pays besides compute and communication (env::RoundOverhead): a real run pays
  // it on its own clock, so the key only belongs to simulated runs (orchestra calibrate writes it).
  if (r.has("round_overhead") && mode == ClusterMode::Real)
    r.fail("round_overhead", "a real run pays its own round overheads; this key models them in a simulated run");
  common::YamlReader overhead = r.child("round_overhead");
  c.overhead.fixed_ms = overhead.real("fixed_ms", 0.0, common::kStepMs);
  c.overhead.per_step_ms = overhead.real("per_step_ms", 0.0, common::kStepMs);
  overhead.reject_unknown_keys();
  if (r.has("round_overhead")) r.resolved()["round_overhead"] = overhead.resolved();
  r.reject_unknown_keys();
  return c;
}

env::NetworkSpec read_network(common::YamlReader& r) {
  env::NetworkSpec n;
  // Inter-server: Orchestra's testbed links servers with gigabit Ethernet.
  n.inter_server.alpha_ms = r.real("latency_us", 50.0, common::kLatencyUs) / 1000.0;
  n.inter_server.bytes_per_ms = r.real("bandwidth_gbps", 1.0, common::kBandwidthGbps) * 1e9 / 8.0 / 1000.0;
  // Intra-server: GPUs of one machine over PCIe 3.0 (x4 to x16: 4-16 GB/s); 10 GB/s by default.
  n.intra_server.alpha_ms = r.real("intra_latency_us", 5.0, common::kLatencyUs) / 1000.0;
  n.intra_server.bytes_per_ms = r.real("intra_bandwidth_gbps", 80.0, common::kBandwidthGbps) * 1e9 / 8.0 / 1000.0;
  n.message_bytes = r.real("message_mb", 0.0, common::kMessageMb) * 1e6;
  r.reject_unknown_keys();
  return n;
}

void check_label(const std::string& label, const YAML::Node& where, const std::string& file, const std::string& path) {
  if (const auto problem = policy_label_problem(label))
    common::YamlReader::fail_at(where, file, path, "a policy's label names its results folder: " + common::quoted_name(label) + " " + *problem);
}

void read_policies(common::YamlReader& top, ExperimentConfig& cfg) {
  const auto list = top.sequence("policies");
  if (list.empty()) top.fail("policies", "list at least one policy to run (e.g. - dsgd)");
  std::set<std::string> labels;
  for (std::size_t i = 0; i < list.size(); ++i) {
    PolicyConfig p;
    p.path = "policies[" + std::to_string(i) + "]";
    const YAML::Node node = list[i];
    p.source = node;
    if (node.IsScalar()) {
      p.kind = node.Scalar();
      p.params = YAML::Node(YAML::NodeType::Map);
    } else if (node.IsMap()) {
      if (!node["name"] || !node["name"].IsScalar()) common::YamlReader::fail_at(node, cfg.file, p.path + ".name", "every policy needs a name (dsgd, local-sgd, ...)");
      p.kind = node["name"].Scalar();
      p.params = node;
    } else {
      common::YamlReader::fail_at(node, cfg.file, p.path, "expected a policy name or a mapping with name: and its parameters");
    }
    const bool labelled = p.params["label"] && p.params["label"].IsScalar();
    p.label = labelled ? p.params["label"].Scalar() : p.kind;
    check_label(p.label, labelled ? p.params["label"] : node, cfg.file, p.path + (labelled ? ".label" : node.IsMap() ? ".name" : ""));
    if (!labels.insert(p.label).second)
      common::YamlReader::fail_at(node, cfg.file, p.path + ".label", "two policies named '" + p.label + "': give one a distinct label:");
    cfg.policies.push_back(p);
  }
}

// runtime.training and runtime.surrogate: the surrogate is read now, so a missing or bad file, or
// one fitted on another workload, stops the config before anything runs.
void read_training_backend(common::YamlReader& runtime, ExperimentConfig& cfg) {
  cfg.training_backend = runtime.option("training", TrainingBackend::Libtorch,
                                        {{"libtorch", TrainingBackend::Libtorch}, {"surrogate", TrainingBackend::Surrogate}});
  const std::string file = runtime.text("surrogate", "");
  cfg.surrogate_source = runtime.raw("surrogate");
  if (cfg.training_backend == TrainingBackend::Libtorch) {
    if (!file.empty()) runtime.fail("surrogate", "is only read with training: surrogate (training is libtorch)");
    return;
  }
  if (file.empty())
    runtime.fail("training", "surrogate needs surrogate: FILE, a surrogate written by orchestra surrogate fit "
                             "(e.g. pretrained/surrogate-controller-task.json)");
  if (cfg.mode == ClusterMode::Real) runtime.fail("training", "surrogate models training on a simulated cluster; cluster.mode is real");
  if (cfg.training.timing_only) runtime.fail("training", "surrogate trains nothing with training.timing_only: true; remove one of them");
  std::filesystem::path path = file;
  if (path.is_relative()) path = std::filesystem::path(cfg.file).parent_path() / path;  // like trace files: relative to the config
  cfg.surrogate_file = path.lexically_normal().string();
  cfg.surrogate = read_workload_surrogate(runtime, "surrogate", cfg.surrogate_file, cfg);
}

// A simulated cluster's replicas on the CPU that cannot fit this machine's memory are refused now,
// naming the model, instead of the kernel killing the run silently later (env/train/replica_memory.hpp).
// LeNet's two convolutions and pools leave nothing of an image under 12x12 (env/train/models.cpp):
// said at model.arch when the config is read, not as a bare error when the run builds it.
void check_cnn_input(const common::YamlReader& model, const ExperimentConfig& cfg) {
  if (cfg.training.model.arch != "cnn" || cfg.training_backend != TrainingBackend::Libtorch) return;
  const std::vector<std::int64_t> shape = env::dataset_kind(cfg.data.dataset).input_shape(cfg.data);  // {channels, side, side}
  if (shape.size() == 3 && shape[1] < 12)
    model.fail("arch", "cnn needs inputs of at least 12x12 pixels, and this data set's are " + std::to_string(shape[1]) + "x" +
                           std::to_string(shape[2]) + ": use mlp, or a larger data.synthetic.side");
}

// A synthetic data set too large for the machine: libtorch's allocation error (or its size
// overflow) without the key, or the OOM killer later. Said at data.synthetic when the config is read.
void check_synthetic_data_fits(const common::YamlReader& data, const ExperimentConfig& cfg) {
  if (cfg.data.dataset != "synthetic" || cfg.training_backend != TrainingBackend::Libtorch || cfg.training.timing_only) return;
  if (const auto problem = env::synthetic_data_memory_problem(cfg.data, env::machine_memory_bytes())) data.fail("synthetic", *problem);
}

// A data folder the config names that is not there: the loader's error named a file in it, but
// not the config's line, and only once the run had started (after --jobs had forked its seeds,
// say). The default folder is not checked here: configs are read on machines that train nothing
// (a GPU machine's tests read the shipped configs, and its data lives elsewhere).
void check_data_folder(const common::YamlReader& data, const ExperimentConfig& cfg) {
  const env::DatasetKind& kind = env::dataset_kind(cfg.data.dataset);
  if (!data.given("path") || !kind.reads_files || cfg.data.path == kind.default_path ||
      cfg.training_backend != TrainingBackend::Libtorch || cfg.training.timing_only)
    return;
  if (std::error_code ec; !std::filesystem::is_directory(cfg.data.path, ec))
    data.fail("path", cfg.data.path + " is not a folder (a relative path is read from the config's folder)");
}

void check_replicas_fit(const common::YamlReader& model, const ExperimentConfig& cfg) {
  if (cfg.mode != ClusterMode::Simulated || cfg.training_backend != TrainingBackend::Libtorch || cfg.training.timing_only ||
      cfg.training.device != "cpu")
    return;
  const int workers = cfg.cluster.num_workers();
  const std::int64_t parameters = env::parameter_count(cfg.training.model, env::dataset_kind(cfg.data.dataset).input_shape(cfg.data), 10);
  const double bytes = env::replicas_bytes(parameters, workers, cfg.training.optimizer);
  if (const auto problem = env::replicas_memory_problem(cfg.training.model, parameters, workers, bytes, env::machine_memory_bytes()))
    model.fail(cfg.training.model.arch == "mlp" ? "hidden" : cfg.training.model.arch == "resnet" ? "resnet_width" : "arch", *problem);
}

}  // namespace

std::optional<std::string> policy_label_problem(const std::string& label) {
  if (auto problem = common::name_problem(label)) return problem;
  for (const char* reserved : kReservedLabels)
    if (label == reserved) return "is a name a run writes beside its policies' folders (" + std::string(reserved) + "): choose another label";
  return std::nullopt;
}

ExperimentConfig parse_config(const std::string& text, const std::string& file) {
  const YAML::Node root = common::parse_yaml_text(text, file);
  if (!root || root.IsNull()) throw common::ConfigError(file + ": the config is empty");
  if (!root.IsMap()) throw common::ConfigError(common::where(root, file) + ": expected a YAML mapping with keys like cluster:, training:, policies:");

  ExperimentConfig cfg;
  cfg.file = file;
  common::YamlReader top(root, file, "");
  // The name is results/<name>/: a name, whether given or the file's stem.
  const std::string stem = std::filesystem::path(file).stem().string();
  if (!top.has("name"))
    if (const auto problem = common::name_problem(stem))
      top.fail("name", "the results folder is named after the config file's stem, " + common::quoted_name(stem) + ", which " + *problem + ": give name:");
  cfg.name = top.name("name", stem);
  cfg.seed = static_cast<std::uint64_t>(top.integer("seed", 1, 0, common::kMaxSeed));
  for (const auto s : top.integers("seeds", {}, 0, common::kMaxSeed)) cfg.seeds.push_back(static_cast<std::uint64_t>(s));
  if (top.has("seeds") && cfg.seeds.empty()) top.fail("seeds", "list at least one seed (or remove the key)");
  if (std::set<std::uint64_t>(cfg.seeds.begin(), cfg.seeds.end()).size() != cfg.seeds.size()) top.fail("seeds", "a seed is listed twice");

  common::YamlReader data = top.child("data");
  cfg.data = read_data(data);
  common::YamlReader model = top.child("model");
  cfg.training.model = read_model(model);

  common::YamlReader t = top.child("training");
  cfg.global_batch = static_cast<int>(t.integer("global_batch", 512, 1, 1 << 30));
  cfg.training.optimizer.lr = t.real("lr", 0.05, 0.0, 100.0, true);
  cfg.training.optimizer.momentum = t.real("momentum", 0.9, 0.0, 0.999999);
  cfg.training.optimizer.weight_decay = t.real("weight_decay", 5e-4, 0.0, 1.0);
  cfg.training.lr_schedule =
      t.option("lr_schedule", env::LrSchedule::Constant, {{"constant", env::LrSchedule::Constant}, {"cosine", env::LrSchedule::Cosine}});
  cfg.budget.epochs = static_cast<int>(t.integer("epochs", 5, 1, 1000000));
  cfg.budget.max_sim_seconds = t.real("max_sim_seconds", 0.0, common::kClockS);
  cfg.budget.target_accuracy = t.real("target_accuracy", 0.85, 0.0, 1.0, true);
  cfg.budget.stop_at_target = t.boolean("stop_at_target", false);
  cfg.budget.eval_every_rounds = static_cast<int>(t.integer("eval_every_rounds", 0, 0, common::kMaxRounds));
  cfg.training.timing_only = t.boolean("timing_only", false);
  cfg.timing_train_samples = t.integer("train_samples", 60000, 1, common::kMaxTimingSamples);
  cfg.training.planned_epochs = cfg.budget.epochs;
  {
    std::vector<std::pair<const char*, env::ShardRule>> spellings;
    for (auto r : env::kShardRules) spellings.emplace_back(env::shard_rule_name(r), r);
    cfg.training.shards = t.option("shards", env::ShardRule::Epoch, spellings);
  }
  t.reject_unknown_keys();

  common::YamlReader cluster = top.child("cluster");
  if (!top.has("cluster")) {
    // A training config (an A3C recipe, or a distribution of clusters for `orchestra draw`) given
    // where an experiment is expected: say which command reads it.
    if (top.has("a3c") || top.has("clusters") || top.has("experiments"))
      top.fail("cluster", "required key is missing: this is a training config (it has a3c:, clusters: or experiments:), "
                          "read by `orchestra train` (and its clusters: by `orchestra draw`), not an experiment");
    top.fail("cluster", "required key is missing (the workers and their batch-time models)");
  }
  nlohmann::json workers;
  cfg.cluster = read_cluster(cluster, cfg.mode, workers);
  cfg.mode_where = cluster.has("mode") ? common::where(cluster.raw("mode"), file) : file;
  cluster.resolved()["workers"] = workers;
  common::YamlReader network = top.child("network");
  cfg.network = read_network(network);

  common::YamlReader runtime = top.child("runtime");
  cfg.threads = static_cast<int>(runtime.integer("threads", 1, 1, 256));
  cfg.training.device = runtime.text("device", "cpu");  // checked against the machine by the runner
  cfg.device_source = runtime.raw("device");
  cfg.training.replicas = runtime.option("replicas", env::ReplicaMode::Auto, env::replica_mode_spellings());
  read_training_backend(runtime, cfg);
  cfg.training.tf32 = runtime.boolean("tf32", false);  // GPU only (env::prepare_device); recorded in config.json either way
  runtime.reject_unknown_keys();
  common::YamlReader output = top.child("output");
  cfg.write_rounds = output.boolean("rounds_csv", true);
  output.reject_unknown_keys();

  read_policies(top, cfg);
  top.reject_unknown_keys();

  check_cnn_input(model, cfg);
  check_synthetic_data_fits(data, cfg);
  check_data_folder(data, cfg);
  check_replicas_fit(model, cfg);

  // Each worker must hold its share of the global batch under SSGD's equal split: at least one
  // sample each (with fewer, dsgd gave a worker batch 0 for the whole run, and a loss of 1e12).
  for (const auto& w : cfg.cluster.workers)
    if (w.max_batch < 1) throw common::ConfigError(file + ": worker " + w.name + ": max_batch must be positive");
  const auto worker_count = static_cast<std::int64_t>(cfg.cluster.workers.size());
  if (worker_count > 0 && cfg.global_batch < worker_count)
    t.fail("global_batch", std::to_string(cfg.global_batch) + " for " + std::to_string(worker_count) +
                               " workers: each needs at least one sample of a round, so at least " + std::to_string(worker_count));

  cfg.resolved = top.resolved();
  for (auto* section : {&data, &model, &t, &cluster, &network, &runtime, &output}) cfg.resolved[section->path()] = section->resolved();
  cfg.resolved["file"] = file;
  if (cfg.surrogate) cfg.resolved["runtime"]["surrogate_digest"] = env::surrogate_digest(*cfg.surrogate);
  return cfg;
}

void apply_overrides(ExperimentConfig& config, const Overrides& overrides) {
  if (overrides.seed) config.seed = *overrides.seed;
  if (overrides.threads) config.threads = *overrides.threads;
  config.resolved["seed"] = config.seed;
  config.resolved["runtime"]["threads"] = config.threads;
}

std::shared_ptr<const env::SurrogateModel> read_workload_surrogate(common::YamlReader& r, const std::string& key, const std::string& path,
                                                                   const ExperimentConfig& config) {
  std::shared_ptr<const env::SurrogateModel> surrogate;
  try {
    surrogate = env::read_surrogate(path);
  } catch (const common::DataError& e) {
    r.fail(key, e.what());
  }
  const std::string why = env::task_mismatch(surrogate->task, env::wanted_task(config.data, config.training, config.global_batch));
  if (!why.empty()) r.fail(key, path + ": " + why);
  return surrogate;
}

ExperimentConfig load_config(const std::string& path) {
  if (!std::filesystem::exists(path)) throw common::ConfigError(path + ": no such config file");
  if (std::filesystem::is_directory(path)) throw common::ConfigError(path + ": is a directory, not a config file");
  std::ifstream in(path);
  if (!in) throw common::ConfigError(path + ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

}  // namespace experiments
