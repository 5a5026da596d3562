#include "env/train/dataset.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>

#include "env/sim/cluster.hpp"
#include "common/errors.hpp"

namespace env {
namespace {

// Per-channel standardization with the usual statistics of each set.
void normalize(Dataset& d, const std::vector<double>& mean, const std::vector<double>& stdev) {
  const auto c = static_cast<std::int64_t>(mean.size());
  auto m = torch::tensor(mean, torch::kFloat32).view({1, c, 1, 1});
  auto s = torch::tensor(stdev, torch::kFloat32).view({1, c, 1, 1});
  d.images.sub_(m).div_(s);
}

void limit(Dataset& d, std::int64_t n) {
  if (n > 0 && n < d.size()) {
    d.images = d.images.slice(0, 0, n).contiguous();
    d.labels = d.labels.slice(0, 0, n).contiguous();
  }
}

// Debian ships the IDX files gzip-compressed; users may have them plain.
std::string idx_file(const std::string& folder, const std::string& stem) {
  const std::string gz = folder + "/" + stem + ".gz";
  if (std::filesystem::exists(gz)) return gz;
  const std::string plain = folder + "/" + stem;
  if (std::filesystem::exists(plain)) return plain;
  throw common::DataError(gz + ": no such file (nor " + stem + " uncompressed)");
}

}  // namespace

const char* dataset_name(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::FashionMnist: return "fashion-mnist";
    case DatasetKind::Mnist: return "mnist";
    case DatasetKind::Cifar10: return "cifar10";
    case DatasetKind::Synthetic: return "synthetic";
  }
  return "?";
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
  DatasetPair pair;
  switch (spec.kind) {
    case DatasetKind::Synthetic:
      pair = make_synthetic(spec, seed);
      break;
    case DatasetKind::FashionMnist:
    case DatasetKind::Mnist: {
      // Named one by one: the order of function arguments is unspecified, and errors should
      // name the first missing file.
      const std::string train_images = idx_file(spec.path, "train-images-idx3-ubyte");
      const std::string train_labels = idx_file(spec.path, "train-labels-idx1-ubyte");
      const std::string test_images = idx_file(spec.path, "t10k-images-idx3-ubyte");
      const std::string test_labels = idx_file(spec.path, "t10k-labels-idx1-ubyte");
      pair.train = read_idx_pair(train_images, train_labels);
      pair.test = read_idx_pair(test_images, test_labels);
      if (spec.kind == DatasetKind::FashionMnist) {
        normalize(pair.train, {0.2860}, {0.3530});
        normalize(pair.test, {0.2860}, {0.3530});
      } else {
        normalize(pair.train, {0.1307}, {0.3081});
        normalize(pair.test, {0.1307}, {0.3081});
      }
      break;
    }
    case DatasetKind::Cifar10: {
      std::vector<std::string> train_files;
      for (int i = 1; i <= 5; ++i) train_files.push_back(spec.path + "/data_batch_" + std::to_string(i) + ".bin");
      pair.train = read_cifar10_batches(train_files);
      pair.test = read_cifar10_batches({spec.path + "/test_batch.bin"});
      for (Dataset* d : {&pair.train, &pair.test}) normalize(*d, {0.4914, 0.4822, 0.4465}, {0.2470, 0.2435, 0.2616});
      break;
    }
  }
  limit(pair.train, spec.train_limit);
  limit(pair.test, spec.test_limit);
  return pair;
}

}  // namespace env
