#include "env/surrogate/surrogate_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/number_text.hpp"

namespace env {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& expected, double got) {
  throw std::invalid_argument(field + ": expected " + expected + ", got " + common::shortest_number_text(got));
}

void finite(const std::string& field, double x) {
  if (!std::isfinite(x)) throw std::invalid_argument(field + ": not a finite number");
}

void positive(const std::string& field, double x) {
  finite(field, x);
  if (!(x > 0)) bad(field, "a number > 0", x);
}

void non_negative(const std::string& field, double x) {
  finite(field, x);
  if (!(x >= 0)) bad(field, "a number >= 0", x);
}

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

const char* surrogate_form_name(SurrogateForm form) {
  return form == SurrogateForm::SampleClock ? "sample-clock" : "progress-noise";
}

double LossCurve::at(double progress) const {
  return floor + (initial - floor) * std::pow(1.0 + std::max(progress, 0.0) / scale, -exponent);
}

double AccuracyMap::at(double loss, double round_steps) const {
  const double x = std::clamp(std::log(std::max(loss, 1e-12)), log_loss_min, log_loss_max);
  double y = 0, power = 1;
  for (double c : coefficients) {
    y += c * power;
    power *= x;
  }
  if (steps_gain != 0) y += steps_gain * std::max(0.0, std::log1p(std::max(round_steps, 0.0)) - std::log1p(steps_reference));
  return std::clamp(y, 0.0, 1.0);
}

void validate(const SurrogateModel& m) {
  positive("curve.initial_loss", m.curve.initial);
  non_negative("curve.floor_loss", m.curve.floor);
  if (!(m.curve.floor < m.curve.initial)) bad("curve.floor_loss", "a number below curve.initial_loss", m.curve.floor);
  positive("curve.progress_scale", m.curve.scale);
  positive("curve.exponent", m.curve.exponent);
  positive("progress.reference_batch", m.progress.reference_batch);
  finite("progress.batch_exponent", m.progress.batch_exponent);
  positive("progress.drift_scale", m.progress.drift_scale);
  non_negative("progress.drift_exponent", m.progress.drift_exponent);
  finite("progress.drift_batch_exponent", m.progress.drift_batch_exponent);
  positive("noise.relaxation", m.noise.relaxation);
  non_negative("noise.level", m.noise.level);
  finite("noise.batch_exponent", m.noise.batch_exponent);
  finite("noise.unrecovered", m.noise.unrecovered);
  if (m.noise.unrecovered < 0 || m.noise.unrecovered > 1) bad("noise.unrecovered", "a number in [0, 1]", m.noise.unrecovered);
  non_negative("noise.divergence", m.noise.divergence);
  positive("noise.divergence_scale", m.noise.divergence_scale);
  positive("noise.divergence_exponent", m.noise.divergence_exponent);
  non_negative("noise.fresh_sd", m.noise.fresh_sd);
  finite("noise.observation_correlation", m.noise.observation_correlation);
  if (std::fabs(m.noise.observation_correlation) >= 1)
    bad("noise.observation_correlation", "a number in (-1, 1)", m.noise.observation_correlation);
  non_negative("noise.episode_sd", m.noise.episode_sd);
  positive("noise.penalty_speedup", m.noise.penalty_speedup);
  if (m.accuracy.coefficients.empty()) throw std::invalid_argument("accuracy.coefficients: expected at least one coefficient");
  for (std::size_t k = 0; k < m.accuracy.coefficients.size(); ++k)
    finite("accuracy.coefficients[" + std::to_string(k) + "]", m.accuracy.coefficients[k]);
  finite("accuracy.log_loss_min", m.accuracy.log_loss_min);
  finite("accuracy.log_loss_max", m.accuracy.log_loss_max);
  if (!(m.accuracy.log_loss_min < m.accuracy.log_loss_max))
    bad("accuracy.log_loss_max", "a number above accuracy.log_loss_min", m.accuracy.log_loss_max);
  non_negative("accuracy.residual_sd", m.accuracy.residual_sd);
  finite("accuracy.residual_correlation", m.accuracy.residual_correlation);
  finite("accuracy.steps_gain", m.accuracy.steps_gain);
  non_negative("accuracy.steps_reference", m.accuracy.steps_reference);
  if (std::fabs(m.accuracy.residual_correlation) >= 1)
    bad("accuracy.residual_correlation", "a number in (-1, 1)", m.accuracy.residual_correlation);
  finite("train_loss.log_gap", m.train_loss.log_gap);
  non_negative("train_loss.step_sd", m.train_loss.step_sd);
}

SurrogateRng::SurrogateRng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t SurrogateRng::next() {  // xoshiro256** (Blackman and Vigna)
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double SurrogateRng::uniform() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

double SurrogateRng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double r = std::sqrt(-2.0 * std::log(uniform()));
  const double angle = 6.283185307179586 * uniform();
  spare_ = r * std::sin(angle);
  has_spare_ = true;
  return r * std::cos(angle);
}

GlobalState SurrogateDynamics::start(SurrogateRng& rng) const {
  GlobalState g;
  g.episode_scale = std::exp(m_.noise.episode_sd * rng.normal() - 0.5 * m_.noise.episode_sd * m_.noise.episode_sd);
  observe(g, ReplicaState{}, &rng);
  return g;
}

void SurrogateDynamics::advance(ReplicaState& r, double steps, double batch, double lr_factor) const {
  if (steps <= 0) return;
  const double b = std::max(batch, 1.0);
  const double ratio = m_.progress.reference_batch / b;
  r.progress += steps * lr_factor * std::pow(ratio, -m_.progress.batch_exponent);
  r.drift += steps * lr_factor * std::pow(ratio, m_.progress.drift_batch_exponent);
  // The inherited noise and the barrier P relax whatever the fresh noise's level: with level 0 and
  // a divergence > 0 (a file may say so; the fit never writes one), P was added at every average
  // and never shed, and the loss climbed without bound.
  const double a = std::exp(-m_.noise.relaxation * lr_factor * steps);
  r.decay *= a;
  r.penalty_decay *= m_.noise.penalty_speedup == 1 ? a : std::exp(-m_.noise.penalty_speedup * m_.noise.relaxation * lr_factor * steps);
  if (m_.noise.level > 0) {
    const double stationary = m_.noise.level * lr_factor * std::pow(ratio, m_.noise.batch_exponent);
    r.fresh = a * r.fresh + (1.0 - a) * stationary;
  }
  r.steps += static_cast<std::int64_t>(std::llround(steps));
}

double SurrogateDynamics::loss_of(const ReplicaState& r, const GlobalState& g) const {
  return m_.curve.at(r.progress) * g.episode_scale + r.noise();
}

double SurrogateDynamics::expected_train_loss(const ReplicaState& r, const GlobalState& g) const {
  return loss_of(r, g) * std::exp(m_.train_loss.log_gap);
}

double SurrogateDynamics::draw_train_loss(const ReplicaState& r, const GlobalState& g, SurrogateRng& rng) const {
  const double sd = m_.train_loss.step_sd;
  return loss_of(r, g) * std::exp(m_.train_loss.log_gap + sd * rng.normal() - 0.5 * sd * sd);
}

SurrogateDynamics::NoiseParts SurrogateDynamics::average_parts(const std::vector<const ReplicaState*>& members,
                                                              const std::vector<double>& weights) const {
  double drift = 0, progress = 0, gain = 0, shared = 0, fresh_sq = 0, fresh = 0, w_sq = 0, steps = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const ReplicaState& r = *members[i];
    const double w = weights[i];
    drift += w * r.drift;
    steps += w * static_cast<double>(r.steps);
    progress += w * r.base_progress;
    gain += w * (r.progress - r.base_progress);
    shared += w * std::sqrt(std::max(r.decay * r.inherited + r.penalty_decay * r.penalty, 0.0));
    fresh_sq += w * w * r.fresh;
    fresh += w * r.fresh;
    w_sq += w * w;
  }
  const double efficiency = std::pow(1.0 + drift / m_.progress.drift_scale, -m_.progress.drift_exponent);
  NoiseParts parts;
  parts.progress = progress + efficiency * gain;
  parts.round_steps = steps;
  parts.inherited = shared * shared;
  const double r = m_.noise.divergence > 0 ? std::pow(drift / m_.noise.divergence_scale, m_.noise.divergence_exponent) : 0.0;
  // r / (1 + r), 1 where r overflows: a steep exponent made r inf, and inf / inf a NaN loss.
  const double saturation = std::isinf(r) ? 1.0 : r / (1.0 + r);
  parts.penalty = (1.0 - w_sq) * m_.noise.divergence * saturation;
  parts.fresh = fresh_sq + (1.0 - w_sq) * m_.noise.unrecovered * fresh + parts.penalty;
  return parts;
}

ReplicaState SurrogateDynamics::average(const std::vector<const ReplicaState*>& members, const std::vector<double>& weights,
                                        SurrogateRng* rng) const {
  const NoiseParts parts = average_parts(members, weights);
  double z = 1;
  if (rng && m_.form == SurrogateForm::ProgressNoise && m_.noise.fresh_sd > 0) {
    const double sd = m_.noise.fresh_sd;
    z = std::exp(sd * rng->normal() - 0.5 * sd * sd);
  }
  ReplicaState out;
  out.progress = parts.progress;
  out.base_progress = parts.progress;
  out.inherited = parts.inherited + z * (parts.fresh - parts.penalty);
  out.penalty = z * parts.penalty;
  out.round_steps = parts.round_steps;
  return out;
}

void SurrogateDynamics::observe(GlobalState& g, const ReplicaState& averaged, SurrogateRng* rng) const {
  g.model = averaged;
  double loss = loss_of(averaged, g);
  if (m_.form == SurrogateForm::SampleClock) {
    const double phi = m_.noise.observation_correlation;
    if (rng) g.observation = phi * g.observation + std::sqrt(1.0 - phi * phi) * m_.noise.fresh_sd * rng->normal();
    loss *= std::exp(g.observation);
  }
  const double rho = m_.accuracy.residual_correlation;
  if (rng) g.accuracy_residual = rho * g.accuracy_residual + std::sqrt(1.0 - rho * rho) * m_.accuracy.residual_sd * rng->normal();
  g.loss = loss;
  g.accuracy = std::clamp(m_.accuracy.at(loss, averaged.round_steps) + g.accuracy_residual, 0.0, 1.0);
}

}  // namespace env
