// A model too large for the machine is refused when the config is read (env/train/replica_memory.hpp):
// its parameters counted from its shape, for every model in the table, as the built model has them.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include "env/train/models.hpp"
#include "env/train/replica_memory.hpp"

namespace {

std::int64_t built_parameters(const env::ModelSpec& spec, const std::vector<std::int64_t>& shape, int classes) {
  std::int64_t count = 0;
  for (const auto& p : env::make_model(spec, shape, classes)->parameters()) count += p.numel();
  return count;
}

env::ModelSpec spec(const char* arch, std::vector<int> hidden = {256, 128}, int blocks = 1, int width = 16) {
  env::ModelSpec m;
  m.arch = arch;
  m.hidden = std::move(hidden);
  m.resnet_blocks = blocks;
  m.resnet_width = width;
  return m;
}

}  // namespace

TEST_CASE("replica memory: every model's parameters, counted from its shape, are the built model's") {
  // Each row of the table is counted (a model added without its count throws here).
  for (const auto& kind : env::model_registry()) {
    const std::vector<std::int64_t> shape = kind.name == std::string("mlp") ? std::vector<std::int64_t>{1, 28, 28} : std::vector<std::int64_t>{3, 32, 32};
    const env::ModelSpec m = spec(kind.name, {64, 32}, 1, 4);
    CHECK_MESSAGE(env::parameter_count(m, shape, 10) == built_parameters(m, shape, 10), kind.name);
  }
  CHECK(env::parameter_count(spec("mlp"), {1, 28, 28}, 10) == 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  CHECK(env::parameter_count(spec("mlp", {}), {3, 5, 5}, 7) == built_parameters(spec("mlp", {}), {3, 5, 5}, 7));
  CHECK(env::parameter_count(spec("cnn"), {1, 28, 28}, 10) == built_parameters(spec("cnn"), {1, 28, 28}, 10));
  CHECK(env::parameter_count(spec("cnn"), {1, 12, 12}, 3) == built_parameters(spec("cnn"), {1, 12, 12}, 3));
  CHECK(env::parameter_count(spec("resnet", {}, 2, 3), {3, 32, 32}, 10) == built_parameters(spec("resnet", {}, 2, 3), {3, 32, 32}, 10));
  CHECK(env::parameter_count(spec("resnet", {}, 1, 8), {1, 28, 28}, 5) == built_parameters(spec("resnet", {}, 1, 8), {1, 28, 28}, 5));
  CHECK_THROWS_AS(env::parameter_count(spec("transformer"), {1, 28, 28}, 10), std::invalid_argument);
}

TEST_CASE("replica memory: parameters, gradients and momentum per worker, two models for the cluster, and what does not fit is said") {
  env::OptimizerSpec sgd;
  sgd.momentum = 0.9;
  CHECK(env::replicas_bytes(1000, 4, sgd) == 4.0 * 1000 * (3 * 4 + 2));
  sgd.momentum = 0;
  CHECK(env::replicas_bytes(1000, 4, sgd) == 4.0 * 1000 * (2 * 4 + 2));
  CHECK(env::machine_memory_bytes() > 0);

  const env::ModelSpec big = spec("mlp", {65536, 65536});
  CHECK_FALSE(env::replicas_memory_problem(big, 4'300'000'000, 16, 1.0e9, 2.0e9));  // fits
  CHECK_FALSE(env::replicas_memory_problem(big, 4'300'000'000, 16, 1.0e12, 0));     // the machine cannot say
  const auto problem = env::replicas_memory_problem(big, 4'300'000'000, 16, 8.6e11, 2.34e10);
  REQUIRE(problem);
  CHECK(*problem == "mlp [65536, 65536] (4.3 G parameters) on 16 workers needs about 860.0 GB for its replicas, more than this machine's "
                    "23.4 GB of memory: use a smaller model or fewer workers");
  CHECK(env::replicas_memory_problem(spec("cnn"), 61'706, 1, 3.0e6, 1.0e6).value().find("cnn (61.7 k parameters) on 1 worker needs about 3.0 MB") == 0);
}
