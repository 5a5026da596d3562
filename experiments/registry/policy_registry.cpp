#include "experiments/registry/policy_registry.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <sstream>

#include "common/errors.hpp"
#include "common/limits.hpp"
#include "common/names.hpp"
#include "common/yaml_reader.hpp"
#include "env/baselines/adaptive_period.hpp"
#include "env/baselines/baselines.hpp"
#include "env/sim/round_rules.hpp"
#include "experiments/registry/a3c_policy.hpp"
#include "experiments/registry/balancing_policies.hpp"
#include "experiments/registry/orchestra_options.hpp"
#include "experiments/registry/planned_barrier.hpp"

namespace experiments {
namespace {

using common::kMaxBatch;
using common::kMaxLocalSteps;
using Made = std::unique_ptr<env::BarrierPolicy>;

Made make_dsgd(common::YamlReader&, const ExperimentConfig&) { return std::make_unique<env::DsgdPolicy>(); }

Made make_local_sgd(common::YamlReader& r, const ExperimentConfig&) {
  env::LocalSgdOptions o;
  o.batch = static_cast<int>(r.integer("batch", 0, 0, kMaxBatch));
  o.period = static_cast<int>(r.integer("H", o.period, 1, kMaxLocalSteps));
  return std::make_unique<env::LocalSgdPolicy>(o);
}

Made make_mllsgd(common::YamlReader& r, const ExperimentConfig&) {
  env::MllsgdOptions o;
  o.batch = static_cast<int>(r.integer("batch", 0, 0, kMaxBatch));
  o.server_period = static_cast<int>(r.integer("H1", o.server_period, 1, kMaxLocalSteps));
  o.global_period = static_cast<int>(r.integer("H2", o.global_period, 1, kMaxLocalSteps));
  if (o.global_period % o.server_period != 0) r.fail("H2", "must be a multiple of H1 (" + std::to_string(o.server_period) + ")");
  return std::make_unique<env::MllsgdPolicy>(o);
}

Made make_osa(common::YamlReader& r, const ExperimentConfig&) {
  return std::make_unique<env::OsaPolicy>(static_cast<int>(r.integer("batch", 0, 0, kMaxBatch)));
}

Made make_adacomm(common::YamlReader& r, const ExperimentConfig& config) {
  env::AdaCommOptions o;
  o.batch = static_cast<int>(r.integer("batch", 0, 0, kMaxBatch));
  o.initial_period = static_cast<int>(r.integer("H0", o.initial_period, 1, kMaxLocalSteps));
  o.interval_s = r.real("interval_s", o.interval_s, 0.0, 1e9, /*min_exclusive=*/true);
  if (config.training.timing_only) r.fail("name", "adacomm steers by the training loss, which a timing-only run does not compute");
  return std::make_unique<env::AdaCommPolicy>(o);
}

Made make_qsr(common::YamlReader& r, const ExperimentConfig& config) {
  env::QsrOptions o;
  o.batch = static_cast<int>(r.integer("batch", 0, 0, kMaxBatch));
  o.base_period = static_cast<int>(r.integer("H_base", o.base_period, 1, kMaxLocalSteps));
  o.alpha = r.real("alpha", o.alpha, 0.0, 1e6, /*min_exclusive=*/true);
  const double lr = config.training.optimizer.lr;
  const bool cosine = config.training.lr_schedule == env::LrSchedule::Cosine;
  const int planned = config.training.planned_epochs;
  o.learning_rate = [lr, cosine, planned](int epoch) { return cosine ? env::cosine_learning_rate(lr, epoch, planned) : lr; };
  return std::make_unique<env::QsrPolicy>(o);
}

Made make_orchestra_lcm(common::YamlReader& r, const ExperimentConfig& config) {
  return std::make_unique<orchestra::BarrierController>(read_barrier_options(r, orchestra::BarrierSource::Lcm, config));
}

Made make_fixed_t(common::YamlReader& r, const ExperimentConfig& config) {
  return std::make_unique<orchestra::BarrierController>(read_barrier_options(r, orchestra::BarrierSource::Fixed, config));
}

// `weighting:` and `outer:` on a model-averaging policy: applied to each of its averaging plans.
class AveragingOptions : public env::BarrierPolicy {
 public:
  AveragingOptions(std::unique_ptr<env::BarrierPolicy> inner, std::optional<env::AverageWeighting> weighting,
                   std::optional<env::OuterOptimizer> outer)
      : inner_(std::move(inner)), weighting_(weighting), outer_(outer) {}
  void start(const env::ClusterView& cluster) override { inner_->start(cluster); }
  env::RoundPlan plan(const env::PlanContext& context) override {
    env::RoundPlan p = inner_->plan(context);
    if (p.aggregation != env::Aggregation::ModelAverage) return p;
    if (weighting_) p.weighting = *weighting_;
    if (outer_) p.outer = outer_;
    return p;
  }
  void observe_round(const env::RoundReport& report) override { inner_->observe_round(report); }
  void observe_epoch(const env::EpochReport& report) override { inner_->observe_epoch(report); }
  void observe_evaluation(const env::EvalResult& result) override { inner_->observe_evaluation(result); }

 private:
  std::unique_ptr<env::BarrierPolicy> inner_;
  std::optional<env::AverageWeighting> weighting_;
  std::optional<env::OuterOptimizer> outer_;
};

// The keys every model-averaging policy takes; a config error on an all-reduce policy.
std::unique_ptr<env::BarrierPolicy> with_averaging_options(std::unique_ptr<env::BarrierPolicy> policy, const PolicyKind& kind,
                                                           common::YamlReader& r) {
  for (const char* key : {"weighting", "outer"})
    if (kind.aggregation == env::Aggregation::GradientAllReduce && r.has(key))
      r.fail(key, std::string(kind.name) + " all-reduces gradients every step, so there is no model average to weight or move: `" + key +
                      "` needs a model-averaging policy (local-sgd, mllsgd, osa, adacomm, qsr, orchestra-lcm, fixed-t, ...)");
  std::optional<env::AverageWeighting> weighting;
  if (r.has("weighting"))
    weighting = read_weighting(r, env::AverageWeighting::Uniform);
  std::optional<env::OuterOptimizer> outer;
  if (r.has("outer")) {
    common::YamlReader o = r.child("outer");
    env::OuterOptimizer spec;
    spec.lr = o.real("lr", spec.lr, 0.0, 100.0, /*min_exclusive=*/true);
    spec.momentum = o.real("momentum", spec.momentum, 0.0, 0.999999);
    spec.nesterov = o.boolean("nesterov", spec.nesterov);
    o.reject_unknown_keys();
    r.resolved()["outer"] = o.resolved();
    outer = spec;
  }
  if (!weighting && !outer) return policy;
  return std::make_unique<AveragingOptions>(std::move(policy), weighting, outer);
}

}  // namespace

const std::vector<PolicyKind>& policy_registry() {
  using env::Aggregation;
  static const std::vector<PolicyKind> table = {
      {"dsgd", "synchronous SGD: equal batches B/N, gradients all-reduced every step", make_dsgd, Aggregation::GradientAllReduce},
      {"local-sgd", "Local SGD: H local steps, then the models are averaged", make_local_sgd},
      {"mllsgd", "multi-level Local SGD: average inside servers every H1 steps, globally every H2", make_mllsgd},
      {"osa", "one-shot averaging: every worker runs its shard, one average per epoch", make_osa},
      {"adacomm", "AdaComm: Local SGD whose period falls with the training loss, tau = ceil(sqrt(F/F0) H0)", make_adacomm},
      {"qsr", "QSR: Local SGD whose period grows as the learning rate decays, H = max(H_base, (alpha/lr)^2)", make_qsr},
      {"lbb", "LBB: batches balanced by profiled speed (Eq. 3), tuned online by SE (Alg. 2)", make_lbb, Aggregation::GradientAllReduce},
      {"boa", "BOA: batches balanced from profiled linear models, refitted and balanced again at each epoch", make_boa, Aggregation::GradientAllReduce},
      {"lb-bsp", "LB-BSP: batches follow an EMA of measured speeds", make_lb_bsp, Aggregation::GradientAllReduce},
      {"orchestra-lcm", "Orchestra: barrier T from the LCM heuristic, speed-proportional data", make_orchestra_lcm,
       Aggregation::ModelAverage, {"batch_sizes"}},
      {"fixed-t", "a given barrier T (T_ms, or T_x_comm times the all-reduce time), for ablations and oracle sweeps", make_fixed_t, Aggregation::ModelAverage, {"batch_sizes"}},
      {"planned-t", "a static T planned before the run on the surrogate of training (orchestra-lcm where it is a guess)",
       make_planned_t_policy, Aggregation::ModelAverage, {"batch_sizes", "planning_seeds"}},
      {"orchestra-a3c", "Orchestra: a trained A3C policy moves T (default: the pretrained one, every round, from the planned T)", make_a3c_policy, Aggregation::ModelAverage, {"batch_sizes", "planning_seeds"}},
      {"orchestra-random", "T moved by a uniformly random action at each decision (the A3C ablation)", make_random_barrier_policy,
       Aggregation::ModelAverage, {"batch_sizes"}},
  };
  return table;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& kind : policy_registry()) names.emplace_back(kind.name);
  return names;
}

std::string policy_help() {
  std::string text;
  for (const auto& kind : policy_registry()) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-17s %s\n", kind.name, kind.summary);
    text += line;
  }
  return text;
}

namespace {

const PolicyKind* find_kind(const std::string& name) {
  for (const auto& k : policy_registry())
    if (name == k.name) return &k;
  return nullptr;
}

bool is_sweep_key(const PolicyKind* kind, const std::string& key, const YAML::Node& values) {
  if (!values.IsSequence() || key == "name" || key == "label") return false;
  return std::find(kind->list_keys.begin(), kind->list_keys.end(), key) == kind->list_keys.end();
}

// How many policies `entry` expands to (its lists' sizes multiplied, as doubles: 1000 lists of
// 1000 must not overflow), and what multiplies, for the message.
double sweep_size(const PolicyConfig& entry, std::string& factors) {
  const PolicyKind* kind = find_kind(entry.kind);
  double size = 1;
  if (!entry.params.IsMap() || !kind) return size;
  for (auto it = entry.params.begin(); it != entry.params.end(); ++it) {
    if (!is_sweep_key(kind, it->first.Scalar(), it->second)) continue;
    size *= static_cast<double>(std::max<std::size_t>(it->second.size(), 1));
    factors += (factors.empty() ? "" : " x ") + it->first.Scalar() + ": " + std::to_string(it->second.size()) + " values";
  }
  return size;
}

// One entry expanded over its first list key, recursively over the rest.
void expand_entry(const PolicyConfig& entry, const ExperimentConfig& config, std::vector<PolicyConfig>& out) {
  const PolicyKind* kind = find_kind(entry.kind);
  if (entry.params.IsMap() && kind) {
    for (auto it = entry.params.begin(); it != entry.params.end(); ++it) {
      const std::string key = it->first.Scalar();
      const YAML::Node values = it->second;
      if (!is_sweep_key(kind, key, values)) continue;
      if (values.size() == 0) common::YamlReader::fail_at(values, config.file, entry.path + "." + key, "an empty sweep: list at least one value");
      for (std::size_t i = 0; i < values.size(); ++i) {
        const YAML::Node value = values[i];
        if (!value.IsScalar())
          common::YamlReader::fail_at(value, config.file, entry.path + "." + key + "[" + std::to_string(i) + "]", "a sweep takes plain values");
        // A new mapping that refers to the same value nodes (YAML::Clone would drop their line
        // numbers), built in one pass: assigning to an entry of it afterwards would write through
        // to the node it shares with `entry`.
        PolicyConfig one = entry;
        one.label = entry.label + "-" + key + "=" + value.Scalar();
        if (const auto problem = policy_label_problem(one.label))
          common::YamlReader::fail_at(value, config.file, entry.path + "." + key + "[" + std::to_string(i) + "]",
                                      "the sweep's label " + common::quoted_name(one.label) + " " + *problem + ": give this value an entry of its own with a label:");
        one.params.reset(YAML::Node(YAML::NodeType::Map));  // rebinds; `=` would overwrite the shared node
        for (auto kv = entry.params.begin(); kv != entry.params.end(); ++kv) {
          const std::string k = kv->first.Scalar();
          one.params[k] = k == key ? value : k == "label" ? YAML::Node(one.label) : kv->second;  // string keys: node keys compare by identity
        }
        expand_entry(one, config, out);
      }
      return;
    }
  }
  out.push_back(entry);
}

}  // namespace

void expand_sweeps(ExperimentConfig& config) {
  // Sized before anything is expanded: a sweep of 10^6 points is one line, not gigabytes.
  const double seeds = static_cast<double>(std::max<std::size_t>(config.seeds.size(), 1));
  double runs = 0;
  for (const auto& entry : config.policies) {
    // A key given twice is the reader's error here: the expansion rebuilds the mapping by key,
    // which would keep one of the two without a word.
    if (entry.params.IsMap()) common::YamlReader(entry.params, config.file, entry.path);
    std::string factors;
    const double size = sweep_size(entry, factors);
    runs += size * seeds;
    if (runs > static_cast<double>(common::kMaxRuns)) {
      const auto whole = [](double v) {
        std::ostringstream text;
        text << std::fixed << std::setprecision(0) << v;
        return text.str();
      };
      const std::string per_seed = seeds > 1 ? ", times " + std::to_string(config.seeds.size()) + " seeds" : "";
      common::YamlReader::fail_at(entry.source, config.file, entry.path,
                                  "this entry gives " + whole(size) + " runs" + (factors.empty() ? "" : " (" + factors + ")") + per_seed +
                                      ", and the experiment " + whole(runs) + " up to here; an experiment runs at most " +
                                      std::to_string(common::kMaxRuns) + " (its policies, sweeps expanded, times its seeds)");
    }
  }
  std::vector<PolicyConfig> expanded;
  for (const auto& entry : config.policies) expand_entry(entry, config, expanded);
  std::map<std::string, const PolicyConfig*> labels;
  for (const auto& p : expanded)
    if (const auto [first, fresh] = labels.emplace(p.label, &p); !fresh)
      common::YamlReader::fail_at(p.source, config.file, p.path + ".label",
                                  "two policies labelled '" + p.label + "' (also " + first->second->path + "): give one a distinct label:");
  config.policies = std::move(expanded);
}

BuiltPolicy make_policy(const PolicyConfig& entry, const ExperimentConfig& config) {
  common::YamlReader r(entry.params, config.file, entry.path);
  r.text("name", entry.kind);
  r.text("label", entry.label);
  const PolicyKind* kind = find_kind(entry.kind);
  if (!kind) {
    std::string known;
    for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
    common::YamlReader::fail_at(entry.source, config.file, entry.path + ".name", "unknown policy '" + entry.kind + "' (known: " + known + ")");
  }
  BuiltPolicy built;
  built.policy = with_averaging_options(kind->make(r, config), *kind, r);
  r.reject_unknown_keys();
  built.resolved = r.resolved();
  return built;
}

}  // namespace experiments
