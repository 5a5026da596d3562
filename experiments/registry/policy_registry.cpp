#include "experiments/registry/policy_registry.hpp"

#include <cstdio>

#include "common/errors.hpp"
#include "common/limits.hpp"
#include "env/baselines/baselines.hpp"
#include "experiments/registry/a3c_policy.hpp"
#include "experiments/registry/balancing_policies.hpp"
#include "experiments/registry/orchestra_options.hpp"

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
  o.weighting = r.option("weighting", env::AverageWeighting::Uniform,
                         {{"uniform", env::AverageWeighting::Uniform}, {"samples", env::AverageWeighting::BySamples}});
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

Made make_orchestra_lcm(common::YamlReader& r, const ExperimentConfig& config) {
  return std::make_unique<orchestra::BarrierController>(read_barrier_options(r, orchestra::BarrierSource::Lcm, config));
}

Made make_fixed_t(common::YamlReader& r, const ExperimentConfig& config) {
  return std::make_unique<orchestra::BarrierController>(read_barrier_options(r, orchestra::BarrierSource::Fixed, config));
}

}  // namespace

const std::vector<PolicyKind>& policy_registry() {
  static const std::vector<PolicyKind> table = {
      {"dsgd", "synchronous SGD: equal batches B/N, gradients all-reduced every step", make_dsgd},
      {"local-sgd", "Local SGD: H local steps, then the models are averaged", make_local_sgd},
      {"mllsgd", "multi-level Local SGD: average inside servers every H1 steps, globally every H2", make_mllsgd},
      {"osa", "one-shot averaging: every worker runs its shard, one average per epoch", make_osa},
      {"lbb", "LBB: batches balanced by profiled speed (Eq. 3), tuned online by SE (Alg. 2)", make_lbb},
      {"boa", "BOA: batches balanced once from profiling, never tuned", make_boa},
      {"lb-bsp", "LB-BSP: batches follow an EMA of measured speeds", make_lb_bsp},
      {"orchestra-lcm", "Orchestra: barrier T from the LCM heuristic, speed-proportional data", make_orchestra_lcm},
      {"fixed-t", "a given barrier T (T_ms), for ablations and oracle sweeps", make_fixed_t},
      {"orchestra-a3c", "Orchestra: a trained A3C policy moves T each epoch", make_a3c_policy},
      {"orchestra-random", "T moved by a uniformly random action each epoch (the A3C ablation)", make_random_barrier_policy},
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

BuiltPolicy make_policy(const PolicyConfig& entry, const ExperimentConfig& config) {
  common::YamlReader r(entry.params, config.file, entry.path);
  r.text("name", entry.kind);
  r.text("label", entry.label);
  const PolicyKind* kind = nullptr;
  for (const auto& k : policy_registry())
    if (entry.kind == k.name) kind = &k;
  if (!kind) {
    std::string known;
    for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
    common::YamlReader::fail_at(entry.source, config.file, entry.path + ".name", "unknown policy '" + entry.kind + "' (known: " + known + ")");
  }
  BuiltPolicy built;
  built.policy = kind->make(r, config);
  r.reject_unknown_keys();
  built.resolved = r.resolved();
  return built;
}

}  // namespace experiments
