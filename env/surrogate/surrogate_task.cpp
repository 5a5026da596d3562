#include "env/surrogate/surrogate_task.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace env {
namespace {

std::string number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

// Optimizer settings are compared with a relative tolerance: they travel through YAML and JSON.
bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a)); }

}  // namespace

std::string task_mismatch(const SurrogateTask& fitted, const SurrogateTask& wanted) {
  const std::string was = "the surrogate was fitted on ";
  if (fitted.dataset != wanted.dataset) return was + "data set " + fitted.dataset + ", this run uses " + wanted.dataset;
  if (wanted.train_samples > 0 && wanted.train_samples != fitted.train_samples)
    return was + std::to_string(fitted.train_samples) + " training samples, this run uses " + std::to_string(wanted.train_samples);
  if (wanted.test_samples > 0 && wanted.test_samples != fitted.test_samples)
    return was + std::to_string(fitted.test_samples) + " test samples, this run uses " + std::to_string(wanted.test_samples);
  if (fitted.model != wanted.model) return was + "model " + fitted.model + ", this run trains " + wanted.model;
  if (fitted.global_batch != wanted.global_batch)
    return was + "global batch " + std::to_string(fitted.global_batch) + ", this run uses " + std::to_string(wanted.global_batch);
  if (!same(fitted.lr, wanted.lr)) return was + "lr " + number(fitted.lr) + ", this run uses " + number(wanted.lr);
  if (!same(fitted.momentum, wanted.momentum))
    return was + "momentum " + number(fitted.momentum) + ", this run uses " + number(wanted.momentum);
  if (!same(fitted.weight_decay, wanted.weight_decay))
    return was + "weight decay " + number(fitted.weight_decay) + ", this run uses " + number(wanted.weight_decay);
  if (fitted.lr_schedule != wanted.lr_schedule)
    return was + "lr schedule " + fitted.lr_schedule + ", this run uses " + wanted.lr_schedule;
  return "";
}

nlohmann::json task_to_json(const SurrogateTask& t) {
  return {{"dataset", t.dataset},         {"train_samples", t.train_samples}, {"test_samples", t.test_samples},
          {"model", t.model},             {"parameters", t.parameters},       {"global_batch", t.global_batch},
          {"lr", t.lr},                   {"momentum", t.momentum},           {"weight_decay", t.weight_decay},
          {"lr_schedule", t.lr_schedule}};
}

SurrogateTask task_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("task: expected an object");
  auto field = [&](const char* key) -> const nlohmann::json& {
    if (!j.contains(key)) throw std::invalid_argument(std::string("task.") + key + ": missing");
    return j.at(key);
  };
  auto text = [&](const char* key) {
    const auto& v = field(key);
    if (!v.is_string()) throw std::invalid_argument(std::string("task.") + key + ": expected a string");
    return v.get<std::string>();
  };
  auto integer = [&](const char* key) {
    const auto& v = field(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      throw std::invalid_argument(std::string("task.") + key + ": expected a non-negative integer");
    return v.get<std::int64_t>();
  };
  auto real = [&](const char* key) {
    const auto& v = field(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) throw std::invalid_argument(std::string("task.") + key + ": expected a finite number");
    return v.get<double>();
  };
  SurrogateTask t;
  t.dataset = text("dataset");
  t.train_samples = integer("train_samples");
  t.test_samples = integer("test_samples");
  t.model = text("model");
  t.parameters = integer("parameters");
  const std::int64_t global_batch = integer("global_batch");
  if (global_batch > (std::int64_t{1} << 30)) throw std::invalid_argument("task.global_batch: expected at most 2^30, got " + std::to_string(global_batch));
  t.global_batch = static_cast<int>(global_batch);  // in range: no wrap to another batch
  t.lr = real("lr");
  t.momentum = real("momentum");
  t.weight_decay = real("weight_decay");
  t.lr_schedule = text("lr_schedule");
  if (t.train_samples < 1) throw std::invalid_argument("task.train_samples: expected at least 1");
  if (t.global_batch < 1) throw std::invalid_argument("task.global_batch: expected at least 1");
  return t;
}

}  // namespace env
