// IDX files (MNIST, Fashion-MNIST), gzip-compressed or plain: zlib's gzread reads both.
#include <zlib.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "env/train/dataset.hpp"
#include "common/errors.hpp"

namespace env {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

GzFile open_gz(const std::string& path) {
  if (!std::filesystem::exists(path)) throw common::DataError(path + ": no such file");
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) throw common::DataError(path + ": cannot open");
  return file;
}

// Reads exactly n bytes or says how many were missing.
void read_exact(gzFile_s* file, const std::string& path, void* out, std::size_t n, const char* what) {
  std::size_t done = 0;
  auto* bytes = static_cast<unsigned char*>(out);
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
    const int got = gzread(file, bytes + done, chunk);
    if (got < 0) {
      int code = 0;
      throw common::DataError(path + ": corrupt or unreadable (" + gzerror(file, &code) + ")");
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  if (done < n)
    throw common::DataError(path + ": truncated: expected " + std::to_string(n) + " bytes of " + what + ", found " +
                    std::to_string(done));
}

std::uint32_t big_endian(const std::array<unsigned char, 4>& b) {
  return (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) | (std::uint32_t(b[2]) << 8) | b[3];
}

// Header: magic 0x00000800 | type << 8 | rank, then `rank` big-endian dimensions.
std::vector<std::int64_t> read_header(gzFile_s* file, const std::string& path, std::uint32_t expected_magic) {
  std::array<unsigned char, 4> word{};
  read_exact(file, path, word.data(), 4, "header");
  const std::uint32_t magic = big_endian(word);
  if (magic != expected_magic)
    throw common::DataError(path + ": not an IDX file of the expected kind (magic " + std::to_string(magic) + ", expected " +
                    std::to_string(expected_magic) + ")");
  std::vector<std::int64_t> dims(magic & 0xFF);
  for (auto& d : dims) {
    read_exact(file, path, word.data(), 4, "header");
    d = big_endian(word);
  }
  return dims;
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

Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path) {
  GzFile images_file = open_gz(images_path);
  const auto image_dims = read_header(images_file.get(), images_path, 0x00000803);  // ubyte, rank 3
  GzFile labels_file = open_gz(labels_path);
  const auto label_dims = read_header(labels_file.get(), labels_path, 0x00000801);  // ubyte, rank 1
  if (image_dims[0] != label_dims[0])
    throw common::DataError(images_path + ": " + std::to_string(image_dims[0]) + " images but " + labels_path + " has " +
                    std::to_string(label_dims[0]) + " labels");
  const std::int64_t n = image_dims[0], rows = image_dims[1], cols = image_dims[2];
  if (n <= 0 || rows <= 0 || cols <= 0) throw common::DataError(images_path + ": empty image set");

  auto pixels = torch::empty({n, 1, rows, cols}, torch::kUInt8);
  read_exact(images_file.get(), images_path, pixels.data_ptr(), static_cast<std::size_t>(n * rows * cols), "pixels");
  auto labels = torch::empty({n}, torch::kUInt8);
  read_exact(labels_file.get(), labels_path, labels.data_ptr(), static_cast<std::size_t>(n), "labels");
  if (labels.max().item<int>() > 9) throw common::DataError(labels_path + ": label above 9 in a 10-class set");

  Dataset d;
  d.images = pixels.to(torch::kFloat32).div_(255.0);
  d.labels = labels.to(torch::kInt64);
  return d;
}

DatasetPair read_idx_folder(const std::string& folder) {
  // Named one by one: the order of function arguments is unspecified, and errors should name the
  // first missing file.
  const std::string train_images = idx_file(folder, "train-images-idx3-ubyte");
  const std::string train_labels = idx_file(folder, "train-labels-idx1-ubyte");
  const std::string test_images = idx_file(folder, "t10k-images-idx3-ubyte");
  const std::string test_labels = idx_file(folder, "t10k-labels-idx1-ubyte");
  DatasetPair pair;
  pair.train = read_idx_pair(train_images, train_labels);
  pair.test = read_idx_pair(test_images, test_labels);
  return pair;
}

}  // namespace env
