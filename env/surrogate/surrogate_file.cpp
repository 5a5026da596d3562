#include "env/surrogate/surrogate_file.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"

namespace env {
namespace {

const nlohmann::json& member(const nlohmann::json& j, const std::string& path, const char* key) {
  if (!j.is_object()) throw std::invalid_argument(path + ": expected an object");
  if (!j.contains(key)) throw std::invalid_argument(path + "." + key + ": missing");
  return j.at(key);
}

double number(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = member(j, path, key);
  if (!v.is_number()) throw std::invalid_argument(path + "." + key + ": expected a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw std::invalid_argument(path + "." + key + ": not a finite number");
  return x;
}

}  // namespace

nlohmann::json surrogate_to_json(const SurrogateModel& m, const nlohmann::json& fit) {
  nlohmann::json j;
  j["format"] = kSurrogateFormat;
  j["version"] = kSurrogateVersion;
  j["form"] = surrogate_form_name(m.form);
  j["task"] = task_to_json(m.task);
  j["curve"] = {{"initial_loss", m.curve.initial}, {"floor_loss", m.curve.floor}, {"progress_scale", m.curve.scale},
                {"exponent", m.curve.exponent}};
  j["progress"] = {{"reference_batch", m.progress.reference_batch}, {"batch_exponent", m.progress.batch_exponent},
                   {"drift_scale", m.progress.drift_scale}, {"drift_exponent", m.progress.drift_exponent},
                   {"drift_batch_exponent", m.progress.drift_batch_exponent}};
  j["noise"] = {{"relaxation", m.noise.relaxation}, {"level", m.noise.level}, {"batch_exponent", m.noise.batch_exponent},
                {"unrecovered", m.noise.unrecovered}, {"divergence", m.noise.divergence},
                {"divergence_scale", m.noise.divergence_scale}, {"divergence_exponent", m.noise.divergence_exponent},
                {"penalty_speedup", m.noise.penalty_speedup}, {"fresh_sd", m.noise.fresh_sd},
                {"observation_correlation", m.noise.observation_correlation}, {"episode_sd", m.noise.episode_sd}};
  j["accuracy"] = {{"coefficients", m.accuracy.coefficients}, {"log_loss_min", m.accuracy.log_loss_min},
                   {"log_loss_max", m.accuracy.log_loss_max}, {"residual_sd", m.accuracy.residual_sd},
                   {"residual_correlation", m.accuracy.residual_correlation}};
  if (m.accuracy.steps_gain != 0) {  // files without a gain read as 0, and stay as they were
    j["accuracy"]["steps_gain"] = m.accuracy.steps_gain;
    j["accuracy"]["steps_reference"] = m.accuracy.steps_reference;
  }
  j["train_loss"] = {{"log_gap", m.train_loss.log_gap}, {"step_sd", m.train_loss.step_sd}};
  if (!fit.is_null()) j["fit"] = fit;
  return j;
}

SurrogateModel surrogate_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("expected a JSON object");
  const auto& format = member(j, "", "format");
  if (!format.is_string() || format.get<std::string>() != kSurrogateFormat)
    throw std::invalid_argument(std::string("format: expected \"") + kSurrogateFormat + "\" (not a surrogate file)");
  const auto& version = member(j, "", "version");
  if (!version.is_number_integer() || version.get<int>() != kSurrogateVersion)
    throw std::invalid_argument("version: expected " + std::to_string(kSurrogateVersion) + ", got " + version.dump() +
                                " (written by another version of the toolkit)");
  SurrogateModel m;
  const auto& form = member(j, "", "form");
  if (form == surrogate_form_name(SurrogateForm::ProgressNoise))
    m.form = SurrogateForm::ProgressNoise;
  else if (form == surrogate_form_name(SurrogateForm::SampleClock))
    m.form = SurrogateForm::SampleClock;
  else
    throw std::invalid_argument("form: expected \"progress-noise\" or \"sample-clock\", got " + form.dump());
  m.task = task_from_json(member(j, "", "task"));
  const auto& c = member(j, "", "curve");
  m.curve = {number(c, "curve", "initial_loss"), number(c, "curve", "floor_loss"), number(c, "curve", "progress_scale"),
             number(c, "curve", "exponent")};
  const auto& p = member(j, "", "progress");
  m.progress = {number(p, "progress", "reference_batch"), number(p, "progress", "batch_exponent"), number(p, "progress", "drift_scale"),
                number(p, "progress", "drift_exponent"), number(p, "progress", "drift_batch_exponent")};
  const auto& n = member(j, "", "noise");
  m.noise.relaxation = number(n, "noise", "relaxation");
  m.noise.level = number(n, "noise", "level");
  m.noise.batch_exponent = number(n, "noise", "batch_exponent");
  m.noise.unrecovered = number(n, "noise", "unrecovered");
  m.noise.divergence = number(n, "noise", "divergence");
  m.noise.divergence_scale = number(n, "noise", "divergence_scale");
  m.noise.divergence_exponent = number(n, "noise", "divergence_exponent");
  // Files fitted before the barrier had its own rate have no k: theirs is 1.
  if (n.contains("penalty_speedup")) m.noise.penalty_speedup = number(n, "noise", "penalty_speedup");
  m.noise.fresh_sd = number(n, "noise", "fresh_sd");
  m.noise.observation_correlation = number(n, "noise", "observation_correlation");
  m.noise.episode_sd = number(n, "noise", "episode_sd");
  const auto& a = member(j, "", "accuracy");
  const auto& coefficients = member(a, "accuracy", "coefficients");
  if (!coefficients.is_array()) throw std::invalid_argument("accuracy.coefficients: expected a list of numbers");
  for (std::size_t k = 0; k < coefficients.size(); ++k) {
    if (!coefficients[k].is_number())
      throw std::invalid_argument("accuracy.coefficients[" + std::to_string(k) + "]: expected a number");
    m.accuracy.coefficients.push_back(coefficients[k].get<double>());
  }
  m.accuracy.log_loss_min = number(a, "accuracy", "log_loss_min");
  m.accuracy.log_loss_max = number(a, "accuracy", "log_loss_max");
  m.accuracy.residual_sd = number(a, "accuracy", "residual_sd");
  m.accuracy.residual_correlation = number(a, "accuracy", "residual_correlation");
  // Files without a steps gain (every plain fit) read as 0: the accuracy is the loss's alone.
  if (a.contains("steps_gain")) m.accuracy.steps_gain = number(a, "accuracy", "steps_gain");
  if (a.contains("steps_reference")) m.accuracy.steps_reference = number(a, "accuracy", "steps_reference");
  const auto& t = member(j, "", "train_loss");
  m.train_loss = {number(t, "train_loss", "log_gap"), number(t, "train_loss", "step_sd")};
  validate(m);
  return m;
}

std::shared_ptr<const SurrogateModel> read_surrogate(const std::string& path) {
  if (!std::filesystem::exists(path)) throw common::DataError(path + ": no such surrogate file");
  if (std::filesystem::is_directory(path)) throw common::DataError(path + ": is a directory, not a surrogate file");
  std::ifstream in(path);
  if (!in) throw common::DataError(path + ": cannot read the surrogate file");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range (1e999)
    throw common::DataError(path + ": not a surrogate file (not valid JSON: " + e.what() + ")");
  }
  try {
    return std::make_shared<const SurrogateModel>(surrogate_from_json(j));
  } catch (const std::invalid_argument& e) {
    throw common::DataError(path + ": " + e.what());
  }
}

std::string surrogate_digest(const SurrogateModel& model) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a, 64 bits
  for (const unsigned char byte : surrogate_to_json(model).dump()) {
    hash ^= byte;
    hash *= 1099511628211ULL;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

void write_surrogate(const std::string& path, const SurrogateModel& model, const nlohmann::json& fit) {
  common::write_file_atomic(path, surrogate_to_json(model, fit).dump(2) + "\n");
}

}  // namespace env
