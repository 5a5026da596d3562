#include "env/train/step_profiler.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <new>
#include <string>

namespace env {

StepTimer::StepTimer(const ModelSpec& model, std::vector<std::int64_t> input_shape, int classes, std::uint64_t seed)
    : input_shape_(std::move(input_shape)), classes_(classes) {
  torch::manual_seed(seed);
  model_ = make_model(model, input_shape_, classes_);
  model_->train();  // batch norm in training mode, as in a training step
  parameter_bytes_ = env::parameter_bytes(*model_);
}

double StepTimer::timed_step() {
  model_->zero_grad();
  const auto start = std::chrono::steady_clock::now();
  torch::Tensor loss = torch::nn::functional::cross_entropy(model_->forward(input_), target_);
  loss.backward();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::optional<double> StepTimer::step_ms(int batch) {
  if (batch < 1) throw std::invalid_argument("StepTimer: batch must be >= 1, got " + std::to_string(batch));
  try {
    if (batch != batch_) {
      batch_ = 0;
      input_ = torch::Tensor();  // release the previous batch before drawing a larger one
      target_ = torch::Tensor();
      std::vector<std::int64_t> shape{batch};
      shape.insert(shape.end(), input_shape_.begin(), input_shape_.end());
      input_ = torch::randn(shape);
      target_ = torch::randint(classes_, {batch}, torch::kLong);
      timed_step();  // warm-up at the new size, not counted
      batch_ = batch;
    }
    return timed_step();
  } catch (const std::bad_alloc&) {
  } catch (const c10::Error& e) {
    if (!is_out_of_memory(e)) throw;
  }
  batch_ = 0;
  input_ = torch::Tensor();
  target_ = torch::Tensor();
  model_->zero_grad();
  return std::nullopt;
}

bool is_out_of_memory(const c10::Error& error) {
  std::string text = error.what_without_backtrace();
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text.find("can't allocate memory") != std::string::npos || text.find("out of memory") != std::string::npos;
}

}  // namespace env
