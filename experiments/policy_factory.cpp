#include "experiments/policy_factory.hpp"

#include <limits>

#include "env/errors.hpp"
#include "experiments/baselines.hpp"
#include "experiments/balancing_policies.hpp"
#include "experiments/orchestra_options.hpp"
#include "experiments/a3c_policy.hpp"
#include "experiments/yaml_reader.hpp"

namespace experiments {
namespace {

constexpr std::int64_t kMaxBatch = 1 << 24;
constexpr std::int64_t kMaxSteps = 1 << 20;

}  // namespace

std::vector<std::string> policy_names() {
  std::vector<std::string> names{"dsgd", "local-sgd", "mllsgd", "osa"};
  for (auto& n : balancing_policy_names()) names.push_back(n);
  for (const char* n : {"orchestra-lcm", "fixed-t", "orchestra-a3c", "orchestra-random"}) names.push_back(n);
  return names;
}

BuiltPolicy make_policy(const PolicyConfig& entry, const ExperimentConfig& config) {
  YamlReader r(entry.params, config.file, entry.path);
  r.text("name", entry.kind);
  r.text("label", entry.label);
  BuiltPolicy built;
  if (entry.kind == "dsgd") {
    built.policy = std::make_unique<DsgdPolicy>();
  } else if (entry.kind == "local-sgd") {
    LocalSgdOptions o;
    o.batch = static_cast<int>(r.integer("batch", 0, 0, kMaxBatch));
    o.period = static_cast<int>(r.integer("H", o.period, 1, kMaxSteps));
    o.sample_weighted = r.choice("weighting", "uniform", {"uniform", "samples"}) == "samples";
    built.policy = std::make_unique<LocalSgdPolicy>(o);
  } else if (entry.kind == "mllsgd") {
    MllsgdOptions o;
    o.batch = static_cast<int>(r.integer("batch", 0, 0, kMaxBatch));
    o.server_period = static_cast<int>(r.integer("H1", o.server_period, 1, kMaxSteps));
    o.global_period = static_cast<int>(r.integer("H2", o.global_period, 1, kMaxSteps));
    if (o.global_period % o.server_period != 0) r.fail("H2", "must be a multiple of H1 (" + std::to_string(o.server_period) + ")");
    built.policy = std::make_unique<MllsgdPolicy>(o);
  } else if (entry.kind == "osa") {
    built.policy = std::make_unique<OsaPolicy>(static_cast<int>(r.integer("batch", 0, 0, kMaxBatch)));
  } else if (entry.kind == "orchestra-lcm" || entry.kind == "fixed-t") {
    const auto source = entry.kind == "fixed-t" ? orchestra::BarrierSource::Fixed : orchestra::BarrierSource::Lcm;
    built.policy = std::make_unique<orchestra::BarrierController>(read_barrier_options(r, source, config));
  } else if (entry.kind == "orchestra-a3c") {
    built.policy = make_a3c_policy(r, config);
  } else if (entry.kind == "orchestra-random") {
    built.policy = make_random_barrier_policy(r, config);
  } else if (auto balancing = make_balancing_policy(entry.kind, r)) {
    built.policy = std::move(balancing);
  } else {
    std::string known;
    for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
    YamlReader::fail_at(entry.source, config.file, entry.path + ".name", "unknown policy '" + entry.kind + "' (known: " + known + ")");
  }
  r.reject_unknown_keys();
  built.resolved = r.resolved();
  return built;
}

}  // namespace experiments
