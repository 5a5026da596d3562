#include "env/train/device.hpp"

#include <regex>
#include <stdexcept>

namespace env {

torch::Device resolve_device(const std::string& spec) {
  static const std::regex spelling("cpu|cuda(:[0-9]{1,3})?");
  if (!std::regex_match(spec, spelling)) throw std::invalid_argument("expected cpu, cuda or cuda:N, got '" + spec + "'");
  if (spec == "cpu") return torch::kCPU;
  if (!torch::cuda::is_available())
    throw std::invalid_argument("'" + spec + "' needs a GPU, but this libtorch " +
                                std::string(torch::cuda::device_count() == 0 ? "sees no CUDA device (built without CUDA, or no GPU visible)"
                                                                             : "cannot use CUDA") +
                                "; use device: cpu, or build against a CUDA libtorch (README, \"With a GPU\")");
  const int index = spec.size() > 5 ? std::stoi(spec.substr(5)) : 0;
  const auto visible = static_cast<int>(torch::cuda::device_count());
  if (index >= visible)
    throw std::invalid_argument("'" + spec + "': only " + std::to_string(visible) + " GPU" + (visible == 1 ? "" : "s") + " visible");
  return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(index));
}

}  // namespace env
