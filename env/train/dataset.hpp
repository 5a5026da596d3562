// Datasets as in-memory tensors: Fashion-MNIST (default), MNIST, CIFAR-10 and a seeded synthetic
// set for tests (the table of them: dataset_registry.hpp). Images are float32 [N, C, H, W],
// normalized per channel; labels int64 [N].
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace env {

struct DataSpec {
  std::string dataset = "fashion-mnist";  // a name in the dataset table (dataset_registry.hpp), checked when read
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

// Loads train and test splits with the dataset table's reader for spec.dataset, then applies the
// limits; throws common::DataError naming the file for anything missing or malformed.
DatasetPair load_dataset(const DataSpec& spec, std::uint64_t seed);

// The readers the dataset table's rows use (one file each), for tests and tools.
Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path);
// The four IDX files of an MNIST-like folder (train-images-idx3-ubyte[.gz], ...).
DatasetPair read_idx_folder(const std::string& folder);
Dataset read_cifar10_batches(const std::vector<std::string>& paths);
// data_batch_1..5.bin and test_batch.bin of a CIFAR-10 folder.
DatasetPair read_cifar10_folder(const std::string& folder);
DatasetPair make_synthetic(const DataSpec& spec, std::uint64_t seed);
// Per-channel standardization of both splits with a dataset's usual statistics.
void normalize(DatasetPair& pair, const std::vector<double>& mean, const std::vector<double>& stdev);

}  // namespace env
