#include "orchestra/rl/merged_barrier_env_vector.hpp"

#include <stdexcept>
#include <utility>

namespace orchestra {

std::vector<BarrierEnv*> MergedBarrierEnvVector::borrowed(BatchedBarrierEnvs* envs) {
  if (envs == nullptr) throw std::invalid_argument("vector env: no environments to merge");
  std::vector<BarrierEnv*> out;
  for (int k = 0; k < envs->size(); ++k) out.push_back(&envs->env(k));
  return out;
}

// The base borrows the environments that envs_ owns; both live as long as this object.
MergedBarrierEnvVector::MergedBarrierEnvVector(std::unique_ptr<BatchedBarrierEnvs> envs)
    : BarrierEnvVector(borrowed(envs.get())), envs_(std::move(envs)) {}

}  // namespace orchestra
