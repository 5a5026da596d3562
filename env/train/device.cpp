#include "env/train/device.hpp"

#include "env/train/float32_precision.hpp"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <vector>

namespace env {
namespace {

int visible_gpus() { return static_cast<int>(torch::cuda::device_count()); }

// One copy of a data set per device, alive while the data set is (place_on).
struct Placement {
  std::weak_ptr<const DatasetPair> source;
  torch::Device device;
  std::shared_ptr<const DatasetPair> copy;
};

Dataset copy_to(const Dataset& d, torch::Device device) { return {d.images.to(device), d.labels.to(device), d.num_classes}; }

}  // namespace

std::string cuda_unavailable_reason() {
  // libc10_cuda registers CUDA's device guard when it loads: without it this libtorch has no CUDA,
  // whatever the machine has.
  if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA))
    return "this libtorch has no CUDA (built without it, or its CUDA libraries are not linked in)";
  if (!torch::cuda::is_available() || visible_gpus() == 0)
    return "this libtorch has CUDA but sees no GPU (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
  return "";
}

torch::Device resolve_device(const std::string& spec) {
  static const std::regex spelling("cpu|cuda(:[0-9]{1,3})?");
  if (!std::regex_match(spec, spelling)) throw std::invalid_argument("expected cpu, cuda or cuda:N, got '" + spec + "'");
  if (spec == "cpu") return torch::kCPU;
  const std::string reason = cuda_unavailable_reason();
  if (!reason.empty())
    throw std::invalid_argument("'" + spec + "' needs a GPU, but " + reason +
                                "; use device: cpu, or build against a CUDA libtorch (README, \"With a GPU\")");
  const int index = spec.size() > 5 ? std::stoi(spec.substr(5)) : 0;
  const int visible = visible_gpus();
  if (index >= visible)
    throw std::invalid_argument("'" + spec + "': only " + std::to_string(visible) + " GPU" + (visible == 1 ? "" : "s") +
                                " visible (cuda:0" + (visible > 1 ? " to cuda:" + std::to_string(visible - 1) : "") + ")");
  return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(index));
}

torch::Device rank_device(const std::string& spec, int local_rank) {
  const torch::Device device = resolve_device(spec);
  if (device.is_cpu() || spec != "cuda") return device;
  return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(local_rank % visible_gpus()));
}

void prepare_device(torch::Device device, bool tf32) {
  if (!device.is_cuda()) return;
  auto& context = at::globalContext();
  // TF32 rounds float32 inputs to a 10-bit mantissa before the products (deterministic, but not
  // float32): off by default, so that GPU runs stay comparable with CPU runs; "high" is PyTorch's
  // name for TF32 in matrix products, "highest" for full float32.
  context.setAllowTF32CuDNN(tf32);
  context.setFloat32MatmulPrecision(tf32 ? "high" : "highest");  // states IEEE or TF32 for cuBLAS outright
  state_cuda_convolution_precision(context, tf32);  // and for cuDNN, where "off" would otherwise be inherited
  static std::once_flag once;
  std::call_once(once, [] {
    // cuBLAS reads this when it creates its handle (the first matrix product on the GPU): with a
    // fixed workspace its reductions no longer depend on which stream ran before.
    ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
    auto& context = at::globalContext();
    context.setDeterministicCuDNN(true);  // convolutions: deterministic algorithms only ...
    context.setBenchmarkCuDNN(false);     // ... and the same one every run (no timing-based choice)
    // PyTorch's own deterministic mode is left off by default: every op this toolkit runs per step
    // is deterministic under the settings above (README "Determinism on a GPU"), and in warn-only
    // mode an op without a deterministic kernel would print a warning at every step.
    // ORCHESTRA_CUDA_STRICT_DETERMINISM=1 turns it on in failing mode, to check that claim.
    if (const char* strict = std::getenv("ORCHESTRA_CUDA_STRICT_DETERMINISM"); strict && std::string(strict) == "1")
      context.setDeterministicAlgorithms(true, /*warn_only=*/false);
  });
}

torch::Tensor to_device(const torch::Tensor& host, torch::Device device) {
  if (device.is_cpu()) return host;
  // The caching host allocator keeps the pinned block until the copy has run, so `host` may go.
  return host.pin_memory().to(device, /*non_blocking=*/true);
}

std::shared_ptr<const DatasetPair> place_on(const std::shared_ptr<const DatasetPair>& data, torch::Device device) {
  if (!data || data->train.images.device() == device) return data;
  static std::mutex mutex;
  static std::vector<Placement> placements;
  const std::lock_guard<std::mutex> lock(mutex);
  // Copies of data sets that are gone are released here.
  placements.erase(std::remove_if(placements.begin(), placements.end(), [](const Placement& p) { return p.source.expired(); }),
                   placements.end());
  for (const auto& p : placements)
    if (p.device == device && p.source.lock() == data) return p.copy;
  auto copy = std::make_shared<const DatasetPair>(DatasetPair{copy_to(data->train, device), copy_to(data->test, device)});
  placements.push_back({data, device, copy});
  return copy;
}

void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace env
