// Where training runs: `runtime.device: cpu | cuda | cuda:N`. The replicas, the batches and the
// averaging live on the device; the data set is copied there once per process (place_on), and a
// step only sends its sample indices (to_device).
//
// Everything here compiles and runs on a libtorch without CUDA: the CUDA branches are only taken
// for a CUDA device, which resolve_device refuses there with one line.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "env/train/dataset.hpp"

namespace env {

// "cpu", "cuda" (GPU 0) or "cuda:N". Throws std::invalid_argument with one line for a spelling it
// does not know, a libtorch built without CUDA, a CUDA libtorch that sees no GPU, or N past the
// visible GPUs.
torch::Device resolve_device(const std::string& spec);

// The device of one rank of a real run: "cuda" is GPU local_rank mod the visible GPUs (one GPU per
// rank when there are enough, ranks sharing them round-robin otherwise), "cuda:N" is GPU N for
// every rank, "cpu" the CPU. Same errors as resolve_device.
torch::Device rank_device(const std::string& spec, int local_rank);

// Why CUDA cannot be used here (empty when it can): "this libtorch was built without CUDA" or
// "this libtorch has CUDA but sees no GPU ...".
std::string cuda_unavailable_reason();

// Call before the first computation on `device`. For a CUDA device, once per process: the
// determinism settings (what they do and do not guarantee: README "Determinism on a GPU"):
// cuDNN deterministic algorithms and no benchmarking, and cuBLAS's fixed workspace
// (CUBLAS_WORKSPACE_CONFIG=:4096:8 unless already set); PyTorch's deterministic algorithms only
// with ORCHESTRA_CUDA_STRICT_DETERMINISM=1. And at every call the TF32 policy (runtime.tf32), for
// cuDNN's convolutions and cuBLAS's matrix products alike: off, float32 stays float32 (GPU results
// agree with the CPU's to float32 rounding); on, both round their inputs to TF32's 10-bit mantissa
// on GPUs that have it (Ampere and later), faster and still deterministic. PyTorch's own defaults
// differ between the two (cuDNN on, matmul off), hence one setting for both. It is libtorch's
// process-wide state: the last call wins. Nothing on the CPU, whose results stay as they were.
void prepare_device(torch::Device device, bool tf32 = false);

// A small host tensor (sample indices, loss weights) on `device`. On the CPU it is returned as is;
// on a GPU it goes through pinned memory without blocking, so sending a step's indices does not
// wait for the previous step's kernels.
torch::Tensor to_device(const torch::Tensor& host, torch::Device device);

// `data` on `device`: itself on the CPU; on a GPU one copy per (data set, device) for as long as
// `data` lives, shared by every caller (a run's policies, the RL environment's episodes).
std::shared_ptr<const DatasetPair> place_on(const std::shared_ptr<const DatasetPair>& data, torch::Device device);

// Waits for the device's queued work (timing a step on a GPU); nothing on the CPU.
void synchronize(torch::Device device);

}  // namespace env
