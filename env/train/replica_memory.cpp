#include "env/train/replica_memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "env/train/workload_task.hpp"

namespace env {
namespace {

std::int64_t linear(std::int64_t in, std::int64_t out, bool bias = true) { return in * out + (bias ? out : 0); }
std::int64_t conv(std::int64_t in, std::int64_t out, std::int64_t kernel, bool bias) { return in * out * kernel * kernel + (bias ? out : 0); }
std::int64_t batch_norm(std::int64_t channels) { return 2 * channels; }  // weight and bias (running statistics are buffers)

// The shapes of models.cpp's classes, layer by layer.
std::int64_t mlp_parameters(const ModelSpec& spec, const std::vector<std::int64_t>& shape, int classes) {
  std::int64_t width = shape[0] * shape[1] * shape[2], count = 0;
  for (const int hidden : spec.hidden) {
    count += linear(width, hidden);
    width = hidden;
  }
  return count + linear(width, classes);
}

std::int64_t lenet_parameters(const std::vector<std::int64_t>& shape, int classes) {
  const std::int64_t after = std::max<std::int64_t>(((shape[1] / 2) - 4) / 2, 0);  // under 1: refused when built
  return conv(shape[0], 6, 5, true) + conv(6, 16, 5, true) + linear(16 * after * after, 120) + linear(120, 84) + linear(84, classes);
}

std::int64_t resnet_parameters(const ModelSpec& spec, const std::vector<std::int64_t>& shape, int classes) {
  std::int64_t count = conv(shape[0], spec.resnet_width, 3, false) + batch_norm(spec.resnet_width);
  std::int64_t in = spec.resnet_width;
  for (int stage = 0; stage < 3; ++stage) {
    const std::int64_t out = static_cast<std::int64_t>(spec.resnet_width) << stage;
    for (int b = 0; b < spec.resnet_blocks; ++b) {
      count += conv(in, out, 3, false) + batch_norm(out) + conv(out, out, 3, false) + batch_norm(out);
      const bool projection = (stage > 0 && b == 0) || in != out;
      if (projection) count += conv(in, out, 1, false) + batch_norm(out);
      in = out;
    }
  }
  return count + linear(in, classes);
}

// 860000000000 -> "860.0 G" with units {"", " k", " M", " G", ...}: in thousands, one decimal
// past the first unit.
std::string in_thousands(double value, const std::vector<const char*>& units) {
  std::size_t unit = 0;
  while (value >= 1000 && unit + 1 < units.size()) {
    value /= 1000;
    ++unit;
  }
  char text[32];
  // Past the last unit a number of many digits is written with an exponent (1.00e+12 PB).
  std::snprintf(text, sizeof text, value >= 1e6 ? "%.2e%s" : unit == 0 ? "%.0f%s" : "%.1f%s", value, units[unit]);
  return text;
}

std::string bytes_text(double bytes) { return in_thousands(bytes, {" B", " kB", " MB", " GB", " TB", " PB"}); }
std::string count_text(double count) { return in_thousands(count, {"", " k", " M", " G", " T"}); }

}  // namespace

std::int64_t parameter_count(const ModelSpec& model, const std::vector<std::int64_t>& input_shape, int classes) {
  if (input_shape.size() != 3) throw std::invalid_argument("models take [C, H, W] inputs");
  if (model.arch == "mlp") return mlp_parameters(model, input_shape, classes);
  if (model.arch == "cnn") return lenet_parameters(input_shape, classes);
  if (model.arch == "resnet") return resnet_parameters(model, input_shape, classes);
  throw std::invalid_argument("parameter_count: no shape for model '" + model.arch + "' (add it beside its row in models.cpp)");
}

double replicas_bytes(std::int64_t parameters, int workers, const OptimizerSpec& optimizer) {
  const double copies_per_worker = optimizer.momentum > 0 ? 3.0 : 2.0;  // parameters, gradients, momentum
  return 4.0 * static_cast<double>(parameters) * (copies_per_worker * workers + 2.0);
}

double machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

double synthetic_data_bytes(const DataSpec& data) {
  // float32 pixels and an int64 label per sample, train and test sets alike.
  const double samples = static_cast<double>(data.synthetic_train) + static_cast<double>(data.synthetic_test);
  return samples * (4.0 * data.synthetic_channels * data.synthetic_side * data.synthetic_side + 8.0);
}

std::optional<std::string> synthetic_data_memory_problem(const DataSpec& data, double memory_bytes) {
  const double bytes = synthetic_data_bytes(data);
  if (memory_bytes <= 0 || bytes <= memory_bytes) return std::nullopt;
  return count_text(static_cast<double>(data.synthetic_train)) + " training and " + count_text(static_cast<double>(data.synthetic_test)) +
         " test samples of " + std::to_string(data.synthetic_channels) + "x" + std::to_string(data.synthetic_side) + "x" +
         std::to_string(data.synthetic_side) + " need about " + bytes_text(bytes) + ", more than this machine's " + bytes_text(memory_bytes) +
         " of memory: use fewer or smaller samples";
}

std::optional<std::string> replicas_memory_problem(const ModelSpec& model, std::int64_t parameters, int workers, double bytes,
                                                   double memory_bytes) {
  if (memory_bytes <= 0 || bytes <= memory_bytes) return std::nullopt;
  return model_description(model) + " (" + count_text(static_cast<double>(parameters)) + " parameters) on " + std::to_string(workers) +
         (workers == 1 ? " worker" : " workers") + " needs about " + bytes_text(bytes) + " for its replicas, more than this machine's " +
         bytes_text(memory_bytes) + " of memory: use a smaller model or fewer workers";
}

}  // namespace env
