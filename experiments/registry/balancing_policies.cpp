#include "experiments/registry/balancing_policies.hpp"

#include <sstream>

#include "common/limits.hpp"
#include "lbb/boa_policy.hpp"
#include "lbb/lb_bsp_policy.hpp"
#include "lbb/lbb_policy.hpp"

namespace experiments {
namespace {

std::string shortest(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Probes per batch size and the share trimmed at each end (LBB Alg. 1 takes one probe; more,
// trimmed, tame noisy workers).
lbb::ProfileOptions read_profile(common::YamlReader& r, lbb::ProfileOptions o) {
  o.repetitions = static_cast<int>(r.integer("repetitions", o.repetitions, 1, 1000));
  o.trim_fraction = r.real("trim", o.trim_fraction, 0.0, 0.5);
  return o;
}

}  // namespace

std::unique_ptr<env::BarrierPolicy> make_lbb(common::YamlReader& r, const ExperimentConfig&) {
  lbb::LbbOptions o;
  o.profiling = r.boolean("profiling", o.profiling);
  o.dynamic_tuning = r.boolean("dynamic_tuning", o.dynamic_tuning);
  // SE (Eq. 4) can exceed 1 (it is a spread over a mean), so the thresholds are not capped at 1.
  o.tuning.fine_threshold = r.real("FT", o.tuning.fine_threshold, 0.0, 100.0);
  o.tuning.rapid_threshold = r.real("RT", o.tuning.rapid_threshold, 0.0, 100.0);
  if (o.tuning.fine_threshold > o.tuning.rapid_threshold)
    r.fail("FT", "must not exceed RT (" + shortest(o.tuning.rapid_threshold) + "): Alg. 2 fine-tunes for FT <= SE < RT");
  o.tuning.step = static_cast<int>(r.integer("step", o.tuning.step, 1, common::kMaxBatch));
  o.tuning.window = static_cast<int>(r.integer("window", o.tuning.window, 0, common::kMaxRounds));
  // lbb/dynamic_tuner.hpp FineStep: `fixed` moves `step` samples (Alg. 2), `balance` re-solves
  // Eq. 3 on the rough models' slopes through the last measured times.
  o.tuning.fine_step = r.option("fine_step", lbb::FineStep::Fixed, {{"fixed", lbb::FineStep::Fixed}, {"balance", lbb::FineStep::Balance}});
  o.profile = read_profile(r, o.profile);
  return std::make_unique<lbb::LbbPolicy>(o);
}

std::unique_ptr<env::BarrierPolicy> make_boa(common::YamlReader& r, const ExperimentConfig&) {
  lbb::BoaOptions o;
  o.profiling = r.boolean("profiling", o.profiling);
  o.profile = read_profile(r, o.profile);
  return std::make_unique<lbb::BoaPolicy>(o);
}

std::unique_ptr<env::BarrierPolicy> make_lb_bsp(common::YamlReader& r, const ExperimentConfig&) {
  lbb::LbBspOptions o;
  o.smoothing = r.real("smoothing", o.smoothing, 0.0, 1.0, /*min_exclusive=*/true);
  return std::make_unique<lbb::LbBspPolicy>(o);
}

}  // namespace experiments
