// The surrogate file: a fitted SurrogateModel as JSON (surrogate_model.hpp names every parameter),
// readable from Python with json.load. Layout:
//   {"format": "orchestra-surrogate", "version": 1, "form": "progress-noise",
//    "task": {...},                                          (surrogate_task.hpp)
//    "curve": {"initial_loss", "floor_loss", "progress_scale", "exponent"},
//    "progress": {"reference_batch", "batch_exponent", "drift_scale", "drift_exponent", "drift_batch_exponent"},
//    "noise": {"relaxation", "level", "batch_exponent", "unrecovered", "fresh_sd", "observation_correlation", "episode_sd"},
//    "accuracy": {"coefficients": [...], "log_loss_min", "log_loss_max", "residual_sd", "residual_correlation"},
//    "train_loss": {"log_gap", "step_sd"},
//    "fit": {...}}                  what it was fitted on and how well it did (free-form, not read)
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "env/surrogate/surrogate_model.hpp"

namespace env {

inline constexpr const char* kSurrogateFormat = "orchestra-surrogate";
inline constexpr const char* kSurrogateSignature = "\"format\": \"orchestra-surrogate\"";  // what every surrogate file holds
inline constexpr int kSurrogateVersion = 1;

// The model's JSON; `fit` (may be null) is stored under "fit".
nlohmann::json surrogate_to_json(const SurrogateModel& model, const nlohmann::json& fit = nullptr);
// Throws std::invalid_argument naming the first missing, ill-typed or out-of-range field.
SurrogateModel surrogate_from_json(const nlohmann::json& json);

// A short fingerprint of the model (16 hex digits, FNV-1a of its JSON without the fit report): what
// a results folder's config.json records as runtime.surrogate_digest, and what `run` and
// `train --resume` compare, so a surrogate refit at the same path counts as another one and the
// same surrogate under another path as the same.
std::string surrogate_digest(const SurrogateModel& model);

// Reads and validates a surrogate file. Throws common::DataError "PATH: reason" for a missing or
// unreadable file, text that is not JSON, another format or version, and any bad field.
std::shared_ptr<const SurrogateModel> read_surrogate(const std::string& path);
// Writes it atomically (common::write_file_atomic).
void write_surrogate(const std::string& path, const SurrogateModel& model, const nlohmann::json& fit = nullptr);

}  // namespace env
