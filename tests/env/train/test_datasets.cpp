// Dataset readers: IDX (gzip or plain), CIFAR-10 binary, synthetic; and their errors.
#include <doctest/doctest.h>
#include <zlib.h>

#include "env/train/dataset.hpp"
#include "common/errors.hpp"
#include "test_helpers.hpp"

using namespace env;
using testing::TempDir;

namespace {

std::string be32(std::uint32_t v) {
  return {char(v >> 24), char((v >> 16) & 0xFF), char((v >> 8) & 0xFF), char(v & 0xFF)};
}

std::string idx_images(std::uint32_t n, std::uint32_t side, std::size_t drop_bytes = 0) {
  std::string s = be32(0x803) + be32(n) + be32(side) + be32(side);
  for (std::uint32_t i = 0; i < n * side * side; ++i) s += char(i % 256);
  return s.substr(0, s.size() - drop_bytes);
}

std::string idx_labels(std::uint32_t n) {
  std::string s = be32(0x801) + be32(n);
  for (std::uint32_t i = 0; i < n; ++i) s += char(i % 10);
  return s;
}

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

}  // namespace

TEST_CASE("IDX files are read gzip-compressed or plain") {
  TempDir dir;
  write_gz(dir / "img.gz", idx_images(5, 4));
  testing::write_text(dir / "lbl", idx_labels(5));
  const Dataset d = read_idx_pair(dir / "img.gz", dir / "lbl");
  CHECK(d.size() == 5);
  CHECK(d.images.sizes() == std::vector<std::int64_t>{5, 1, 4, 4});
  CHECK(d.labels[3].item<std::int64_t>() == 3);
  CHECK(d.images[0][0][0][1].item<float>() == doctest::Approx(1.0 / 255));
}

TEST_CASE("a truncated IDX file is reported with the file and what is missing") {
  TempDir dir;
  write_gz(dir / "img.gz", idx_images(5, 4, 10));
  testing::write_text(dir / "lbl", idx_labels(5));
  CHECK_THROWS_WITH_AS(read_idx_pair(dir / "img.gz", dir / "lbl"),
                       doctest::Contains("img.gz: truncated: expected 80 bytes of pixels, found 70"), common::DataError);
}

TEST_CASE("a file that is not IDX, or a missing one, is reported") {
  TempDir dir;
  testing::write_text(dir / "img", "hello world, not an idx file");
  testing::write_text(dir / "lbl", idx_labels(5));
  CHECK_THROWS_WITH_AS(read_idx_pair(dir / "img", dir / "lbl"), doctest::Contains("not an IDX file"), common::DataError);
  CHECK_THROWS_WITH_AS(read_idx_pair(dir / "nothing.gz", dir / "lbl"), doctest::Contains("nothing.gz: no such file"), common::DataError);
  write_gz(dir / "img.gz", idx_images(4, 4));
  CHECK_THROWS_WITH_AS(read_idx_pair(dir / "img.gz", dir / "lbl"), doctest::Contains("4 images but"), common::DataError);
}

TEST_CASE("missing Fashion-MNIST folder names the file it looked for") {
  DataSpec spec;
  spec.path = "/nonexistent/fashion";
  CHECK_THROWS_WITH_AS(load_dataset(spec, 1), doctest::Contains("/nonexistent/fashion/train-images-idx3-ubyte.gz: no such file"), common::DataError);
}

TEST_CASE("CIFAR-10 binary batches are read and truncated ones rejected") {
  TempDir dir;
  std::string record(1 + 3072, '\0');
  record[0] = 7;
  record[1] = char(255);
  testing::write_text(dir / "b.bin", record + record);
  const Dataset d = read_cifar10_batches({dir / "b.bin"});
  CHECK(d.size() == 2);
  CHECK(d.labels[1].item<std::int64_t>() == 7);
  CHECK(d.images[0][0][0][0].item<float>() == doctest::Approx(1.0));
  testing::write_text(dir / "bad.bin", record + "xyz");
  CHECK_THROWS_WITH_AS(read_cifar10_batches({dir / "bad.bin"}), doctest::Contains("truncated"), common::DataError);
}

TEST_CASE("synthetic data is seeded") {
  DataSpec spec;
  spec.dataset = "synthetic";
  spec.synthetic_train = 64;
  const auto a = make_synthetic(spec, 3), b = make_synthetic(spec, 3), c = make_synthetic(spec, 4);
  CHECK(torch::equal(a.train.images, b.train.images));
  CHECK(torch::equal(a.train.labels, b.train.labels));
  CHECK_FALSE(torch::equal(a.train.images, c.train.images));
}

TEST_CASE("the Fashion-MNIST package's files load (60,000 + 10,000 images)") {
  if (!testing::fashion_mnist_or_skip()) return;
  DataSpec spec;
  spec.path = testing::fashion_mnist_dir();
  const auto pair = load_dataset(spec, 1);
  CHECK(pair.train.size() == 60000);
  CHECK(pair.test.size() == 10000);
  CHECK(pair.train.images.mean().item<double>() == doctest::Approx(0.0).epsilon(0.02));
}
