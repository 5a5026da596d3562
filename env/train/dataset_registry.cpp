#include "env/train/dataset_registry.hpp"

#include <cstdio>
#include <stdexcept>

namespace env {
namespace {

std::vector<std::int64_t> mnist_shape(const DataSpec&) { return {1, 28, 28}; }
std::vector<std::int64_t> cifar_shape(const DataSpec&) { return {3, 32, 32}; }
std::vector<std::int64_t> synthetic_shape(const DataSpec& spec) { return {spec.synthetic_channels, spec.synthetic_side, spec.synthetic_side}; }

// Each set standardized per channel with its usual statistics.
DatasetPair read_fashion_mnist(const DataSpec& spec, std::uint64_t) {
  DatasetPair pair = read_idx_folder(spec.path);
  normalize(pair, {0.2860}, {0.3530});
  return pair;
}

DatasetPair read_mnist(const DataSpec& spec, std::uint64_t) {
  DatasetPair pair = read_idx_folder(spec.path);
  normalize(pair, {0.1307}, {0.3081});
  return pair;
}

DatasetPair read_cifar10(const DataSpec& spec, std::uint64_t) {
  DatasetPair pair = read_cifar10_folder(spec.path);
  normalize(pair, {0.4914, 0.4822, 0.4465}, {0.2470, 0.2435, 0.2616});
  return pair;
}

}  // namespace

const std::vector<DatasetKind>& dataset_registry() {
  static const std::vector<DatasetKind> table = {
      {"fashion-mnist", "Fashion-MNIST: 60,000 + 10,000 28x28 grey images of clothes in 10 classes (IDX, .gz or plain)",
       "/usr/share/datasets/fashion-mnist", true, mnist_shape, read_fashion_mnist},
      {"mnist", "MNIST: 60,000 + 10,000 28x28 grey handwritten digits (IDX, .gz or plain; data.path required)", "", true, mnist_shape,
       read_mnist},
      {"cifar10", "CIFAR-10: 50,000 + 10,000 32x32 colour images in 10 classes (binary batches; data.path required)", "", true,
       cifar_shape, read_cifar10},
      {"synthetic", "seeded class prototypes plus Gaussian noise (data.synthetic: train, test, channels, side, noise); no files", "",
       false, synthetic_shape, make_synthetic},
  };
  return table;
}

std::vector<std::string> dataset_names() {
  std::vector<std::string> names;
  for (const auto& d : dataset_registry()) names.emplace_back(d.name);
  return names;
}

const DatasetKind& dataset_kind(const std::string& name) {
  for (const auto& d : dataset_registry())
    if (name == d.name) return d;
  throw std::invalid_argument("no dataset named '" + name + "' in the dataset table");
}

std::string dataset_help() {
  std::string text;
  for (const auto& d : dataset_registry()) {
    char line[320];
    std::snprintf(line, sizeof line, "  %-15s %s\n", d.name, d.summary);
    text += line;
  }
  return text;
}

}  // namespace env
