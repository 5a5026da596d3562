#include "experiments/runner/hardest_clusters.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/vector_barrier_env.hpp"

namespace experiments {
namespace {

constexpr const char* kFormat = "orchestra-focus-clusters";
constexpr int kFormatVersion = 1;

struct EpisodeEnd {
  double seconds = 0;
  bool reached = false;
};

// One episode to its end; `act` gives each step's move.
template <typename Act>
EpisodeEnd run_episode(orchestra::LocalSgdBarrierEnv& env, std::uint64_t seed, Act act) {
  orchestra::ResetResult start = env.reset(seed);
  if (start.info.reached_target) return {0.0, true};
  std::vector<float> observation = std::move(start.observation);
  while (true) {
    orchestra::StepResult step = env.step(act(observation));
    if (step.terminated || step.truncated) return {step.info.clock_ms / 1000.0, step.terminated};
    observation = std::move(step.observation);
  }
}

// The static sweep's T's as factors of T*: powers of two over the controller's range (T*/8 ... 32 T*
// where it sets none). (orchestra evaluate's own sweep is anchored elsewhere: from the slowest
// worker's step to kStepCap of them, x1.81 a point at its default 8 points, evaluation.cpp.)
std::vector<double> sweep_factors(const agents::PolicyControl& control) {
  const double lo = control.min_barrier_x_start > 0 ? control.min_barrier_x_start : 0.125;
  const double hi = control.max_barrier_x_start > 0 ? control.max_barrier_x_start : 32.0;
  std::vector<double> out;
  for (double x = lo; x <= hi * (1 + 1e-9); x *= 2) out.push_back(x);
  return out;
}

}  // namespace

HardestSearchResult find_hardest_clusters(const TrainConfig& config, agents::A3cPolicy policy, const HardestSearchOptions& options) {
  if (!config.distribution) throw std::invalid_argument("hardest clusters: " + config.file + " draws no clusters (it needs clusters:)");
  if (config.experiments.empty()) throw std::invalid_argument("hardest clusters: " + config.file + " names no experiment");
  // Training episodes start at LCM's T*, and so does the search, whatever start the file deploys.
  if (!(policy.control().as_trained() == config.control))
    throw std::invalid_argument("hardest clusters: the policy's controller (its moves, bounds or state) is not " + config.file +
                                "'s controller: search with the config it was trained with");
  if (options.candidates < 1) throw std::invalid_argument("hardest clusters: candidates must be >= 1");
  if (options.keep < 1) throw std::invalid_argument("hardest clusters: keep must be >= 1");
  HardestSearchResult result;
  result.candidates = options.candidates;
  result.sweep_x_start = sweep_factors(config.control);
  std::vector<orchestra::LocalSgdBarrierEnvConfig> bases;
  for (std::size_t k = 0; k < config.experiments.size(); ++k) {
    orchestra::LocalSgdBarrierEnvConfig base = training_env_config(config, static_cast<std::int64_t>(k));
    base.focus_draws.clear();  // candidates come from the distribution itself
    base.focus_share = 0;
    base.exploring_start = orchestra::Range{1.0, 1.0, true};  // deployment starts at T*
    bases.push_back(std::move(base));
  }
  double log_gap_sum = 0;
  for (int i = 0; i < options.candidates; ++i) {
    const orchestra::LocalSgdBarrierEnvConfig& base = bases[static_cast<std::size_t>(i) % bases.size()];
    const std::uint64_t seed = orchestra::episode_seed(options.seed, static_cast<std::uint64_t>(i));
    orchestra::LocalSgdBarrierEnv policy_env(base);
    const EpisodeEnd by_policy = run_episode(policy_env, seed, [&](const std::vector<float>& o) { return policy.predict(o, true); });
    ClusterGap gap;
    gap.episode_seed = seed;
    gap.draw_seed = orchestra::cluster_draw_seed(base, seed);
    gap.workers = policy_env.cluster().num_workers();
    gap.policy_s = by_policy.seconds;
    gap.policy_reached = by_policy.reached;
    bool any_reached = false;
    for (const double x : result.sweep_x_start) {
      orchestra::LocalSgdBarrierEnvConfig fixed = base;
      fixed.exploring_start = orchestra::Range{x, x, true};
      orchestra::LocalSgdBarrierEnv static_env(fixed);
      const EpisodeEnd held = run_episode(static_env, seed, [](const std::vector<float>&) { return 0; });
      if (held.reached && (!any_reached || held.seconds < gap.best_static_s)) {
        gap.best_static_s = held.seconds;
        gap.best_static_x_start = x;
        any_reached = true;
      }
    }
    if (!any_reached || gap.best_static_s <= 0) {
      ++result.incomparable;
      continue;
    }
    gap.gap = gap.policy_s / gap.best_static_s;
    if (!gap.policy_reached) ++result.policy_misses;
    log_gap_sum += std::log(gap.gap);
    result.clusters.push_back(gap);
  }
  if (!result.clusters.empty()) result.geomean_gap = std::exp(log_gap_sum / static_cast<double>(result.clusters.size()));
  // Hardest first: a miss before any reached run, then the larger gap; ties by seed, so the order
  // is one order.
  std::sort(result.clusters.begin(), result.clusters.end(), [](const ClusterGap& a, const ClusterGap& b) {
    if (a.policy_reached != b.policy_reached) return !a.policy_reached;
    if (a.gap != b.gap) return a.gap > b.gap;
    return a.episode_seed < b.episode_seed;
  });
  return result;
}

void write_focus_clusters(const std::string& path, const HardestSearchResult& result, int keep, const std::string& policy_path,
                          const std::string& config_path, std::uint64_t seed) {
  nlohmann::json clusters = nlohmann::json::array();
  for (std::size_t i = 0; i < result.clusters.size() && static_cast<int>(i) < keep; ++i) {
    const ClusterGap& c = result.clusters[i];
    clusters.push_back({{"draw_seed", c.draw_seed},
                        {"episode_seed", c.episode_seed},
                        {"workers", c.workers},
                        {"policy_s", c.policy_s},
                        {"policy_reached", c.policy_reached},
                        {"best_static_s", c.best_static_s},
                        {"best_static_x_start", c.best_static_x_start},
                        {"gap", c.gap}});
  }
  const nlohmann::json doc = {{"format", kFormat},
                              {"format_version", kFormatVersion},
                              {"policy", policy_path},
                              {"config", config_path},
                              {"seed", seed},
                              {"candidates", result.candidates},
                              {"incomparable", result.incomparable},
                              {"policy_misses", result.policy_misses},
                              {"geomean_gap", result.geomean_gap},
                              {"sweep_x_start", result.sweep_x_start},
                              {"clusters", clusters}};
  common::write_file_atomic(path, doc.dump(1) + "\n");
}

std::vector<std::uint64_t> read_focus_draws(const std::string& path) {
  const nlohmann::json doc = common::read_json_file(path);
  if (!doc.is_object() || doc.value("format", std::string()) != kFormat)
    throw common::DataError(path + ": not a focus-clusters file (format \"" + std::string(kFormat) + "\", written by orchestra surrogate hardest)");
  if (!doc.contains("format_version") || doc["format_version"] != kFormatVersion)
    throw common::DataError(path + ": format_version must be " + std::to_string(kFormatVersion));
  const auto clusters = doc.find("clusters");
  if (clusters == doc.end() || !clusters->is_array() || clusters->empty())
    throw common::DataError(path + ": clusters: expected a non-empty list");
  std::vector<std::uint64_t> draws;
  for (std::size_t i = 0; i < clusters->size(); ++i) {
    const nlohmann::json& c = (*clusters)[i];
    if (!c.is_object() || !c.contains("draw_seed") || !c["draw_seed"].is_number_unsigned())
      throw common::DataError(path + ": clusters[" + std::to_string(i) + "]: expected draw_seed, a non-negative integer");
    draws.push_back(c["draw_seed"].get<std::uint64_t>());
  }
  return draws;
}

}  // namespace experiments
