#include "experiments/policy_factory.hpp"

#include <limits>

#include "env/errors.hpp"
#include "experiments/baselines.hpp"
#include "experiments/yaml_reader.hpp"

namespace experiments {
namespace {

constexpr std::int64_t kMaxBatch = 1 << 24;
constexpr std::int64_t kMaxSteps = 1 << 20;

}  // namespace

std::vector<std::string> policy_names() { return {"dsgd", "local-sgd", "mllsgd", "osa"}; }

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
