// CIFAR-10 binary batches: records of 1 label byte and 3x32x32 pixel bytes (channel-major).
#include <filesystem>
#include <fstream>

#include "env/train/dataset.hpp"
#include "common/errors.hpp"

namespace env {

Dataset read_cifar10_batches(const std::vector<std::string>& paths) {
  constexpr std::int64_t kRecord = 1 + 3 * 32 * 32;
  std::vector<torch::Tensor> records;
  for (const auto& path : paths) {
    if (!std::filesystem::exists(path)) throw common::DataError(path + ": no such file");
    const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(path));
    if (bytes == 0 || bytes % kRecord != 0)
      throw common::DataError(path + ": truncated: " + std::to_string(bytes) + " bytes is not a whole number of " +
                      std::to_string(kRecord) + "-byte CIFAR-10 records");
    auto raw = torch::empty({bytes / kRecord, kRecord}, torch::kUInt8);
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(raw.data_ptr()), bytes)) throw common::DataError(path + ": cannot read");
    records.push_back(raw);
  }
  auto all = torch::cat(records, 0);
  Dataset d;
  d.labels = all.select(1, 0).to(torch::kInt64).contiguous();
  if (d.labels.max().item<int>() > 9) throw common::DataError(paths.front() + ": label above 9 in CIFAR-10");
  d.images = all.slice(1, 1).reshape({-1, 3, 32, 32}).to(torch::kFloat32).div_(255.0);
  return d;
}

DatasetPair read_cifar10_folder(const std::string& folder) {
  std::vector<std::string> train_files;
  for (int i = 1; i <= 5; ++i) train_files.push_back(folder + "/data_batch_" + std::to_string(i) + ".bin");
  DatasetPair pair;
  pair.train = read_cifar10_batches(train_files);
  pair.test = read_cifar10_batches({folder + "/test_batch.bin"});
  return pair;
}

}  // namespace env
