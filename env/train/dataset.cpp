#include "env/train/dataset.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include "env/sim/cluster.hpp"
#include "env/train/dataset_registry.hpp"

namespace env {
namespace {

void limit(Dataset& d, std::int64_t n) {
  if (n > 0 && n < d.size()) {
    d.images = d.images.slice(0, 0, n).contiguous();
    d.labels = d.labels.slice(0, 0, n).contiguous();
  }
}

}  // namespace

void normalize(DatasetPair& pair, const std::vector<double>& mean, const std::vector<double>& stdev) {
  const auto c = static_cast<std::int64_t>(mean.size());
  auto m = torch::tensor(mean, torch::kFloat32).view({1, c, 1, 1});
  auto s = torch::tensor(stdev, torch::kFloat32).view({1, c, 1, 1});
  for (Dataset* d : {&pair.train, &pair.test}) d->images.sub_(m).div_(s);
}

DatasetPair make_synthetic(const DataSpec& spec, std::uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(derive_seed(seed, 7));
  const std::int64_t classes = 10, c = spec.synthetic_channels, side = spec.synthetic_side;
  auto prototypes = at::randn({classes, c, side, side}, gen);
  auto make = [&](std::int64_t n) {
    Dataset d;
    d.labels = at::randint(classes, {n}, gen, torch::kInt64);
    d.images = prototypes.index_select(0, d.labels) + spec.synthetic_noise * at::randn({n, c, side, side}, gen);
    return d;
  };
  DatasetPair pair{make(spec.synthetic_train), make(spec.synthetic_test)};
  return pair;
}

DatasetPair load_dataset(const DataSpec& spec, std::uint64_t seed) {
  DatasetPair pair = dataset_kind(spec.dataset).read(spec, seed);
  limit(pair.train, spec.train_limit);
  limit(pair.test, spec.test_limit);
  return pair;
}

}  // namespace env
