// Datasets as in-memory tensors: Fashion-MNIST (default), MNIST, CIFAR-10 and a seeded synthetic
// set for tests. Images are float32 [N, C, H, W], normalized per channel; labels int64 [N].
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace env {

enum class DatasetKind { FashionMnist, Mnist, Cifar10, Synthetic };

// The `dataset:` spellings (config and command line).
inline const std::vector<std::pair<const char*, DatasetKind>>& dataset_spellings() {
  static const std::vector<std::pair<const char*, DatasetKind>> spellings = {{"fashion-mnist", DatasetKind::FashionMnist},
                                                                              {"mnist", DatasetKind::Mnist},
                                                                              {"cifar10", DatasetKind::Cifar10},
                                                                              {"synthetic", DatasetKind::Synthetic}};
  return spellings;
}

struct DataSpec {
  DatasetKind kind = DatasetKind::FashionMnist;
  std::string path = "/usr/share/datasets/fashion-mnist";  // folder holding the files
  std::int64_t train_limit = 0;  // use only the first N training samples (0 = all)
  std::int64_t test_limit = 0;   // use only the first N test samples (0 = all)
  // Synthetic data: a seeded mixture of class prototypes plus Gaussian noise.
  std::int64_t synthetic_train = 2048;
  std::int64_t synthetic_test = 512;
  int synthetic_channels = 1;
  int synthetic_side = 12;
  double synthetic_noise = 1.0;
};

struct Dataset {
  torch::Tensor images;  // float32 [N, C, H, W]
  torch::Tensor labels;  // int64 [N]
  int num_classes = 10;

  std::int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

struct DatasetPair {
  Dataset train;
  Dataset test;
};

// Loads train and test splits; throws common::DataError naming the file for anything missing or malformed.
DatasetPair load_dataset(const DataSpec& spec, std::uint64_t seed);

// The pieces, for tests and tools.
Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path);
Dataset read_cifar10_batches(const std::vector<std::string>& paths);
DatasetPair make_synthetic(const DataSpec& spec, std::uint64_t seed);
const char* dataset_name(DatasetKind kind);

}  // namespace env
