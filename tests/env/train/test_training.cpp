// Real training: weighted gradient aggregation, model averaging, the environment end to end.
#include <doctest/doctest.h>

#include "env/train/local_sgd_env.hpp"
#include "env/train/replicas.hpp"

using namespace env;

namespace {

std::vector<torch::Tensor> flat_params(Classifier& m) {
  std::vector<torch::Tensor> out;
  for (auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}

double max_diff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

ModelSpec small_mlp() {
  ModelSpec m;
  m.hidden = {16};
  return m;
}

}  // namespace

TEST_CASE("gradients weighted by B_i/B equal one big batch (LBB Sec. 3.2.4), for a model without batch norm") {
  torch::manual_seed(0);
  auto x = torch::randn({10, 1, 4, 4});
  auto y = torch::randint(10, {10}, torch::kInt64);
  OptimizerSpec sgd{0.1, 0.0, 0.0};
  ReplicaSet split(small_mlp(), {1, 4, 4}, 10, 3, sgd, 5);
  ReplicaSet whole(small_mlp(), {1, 4, 4}, 10, 1, sgd, 5);
  // Uneven batches 2, 3, 5 on three workers against the 10 samples at once.
  split.gradient_step({x.slice(0, 0, 2), x.slice(0, 2, 5), x.slice(0, 5, 10)}, {y.slice(0, 0, 2), y.slice(0, 2, 5), y.slice(0, 5, 10)});
  whole.gradient_step({x}, {y});
  CHECK(max_diff(flat_params(split.model(0)), flat_params(whole.model(0))) < 1e-6);
}

TEST_CASE("model averaging writes the mean of the members into every receiver") {
  OptimizerSpec sgd{0.5, 0.0, 0.0};
  ReplicaSet r(small_mlp(), {1, 4, 4}, 10, 3, sgd, 5);
  torch::manual_seed(1);
  r.local_step(0, torch::randn({4, 1, 4, 4}), torch::randint(10, {4}, torch::kInt64));
  r.local_step(1, torch::randn({4, 1, 4, 4}), torch::randint(10, {4}, torch::kInt64));
  const auto p0 = flat_params(r.model(0)), p1 = flat_params(r.model(1));
  CHECK(max_diff(p0, p1) > 1e-4);
  r.average({0, 1}, {0.5, 0.5}, {0, 1, 2});
  std::vector<torch::Tensor> expected;
  for (std::size_t i = 0; i < p0.size(); ++i) expected.push_back((p0[i] + p1[i]) / 2);
  CHECK(max_diff(flat_params(r.model(2)), expected) < 1e-6);
  CHECK(max_diff(flat_params(r.model(0)), expected) < 1e-6);
}

TEST_CASE("replicas start equal, from the seed") {
  OptimizerSpec sgd;
  ReplicaSet a(small_mlp(), {1, 4, 4}, 10, 2, sgd, 9), b(small_mlp(), {1, 4, 4}, 10, 1, sgd, 9);
  CHECK(max_diff(flat_params(a.model(0)), flat_params(a.model(1))) == 0.0);
  CHECK(max_diff(flat_params(a.model(0)), flat_params(b.model(0))) == 0.0);
}

TEST_CASE("every model kind runs forward and backward on its input shape") {
  for (const char* arch : {"mlp", "cnn"}) {
    ModelSpec m;
    m.arch = arch;
    auto model = make_model(m, {1, 28, 28}, 10);
    auto out = model->forward(torch::randn({3, 1, 28, 28}));
    CHECK(out.sizes() == std::vector<std::int64_t>{3, 10});
    out.sum().backward();
  }
  ModelSpec r;
  r.arch = "resnet";
  auto resnet = make_model(r, {3, 32, 32}, 10);
  CHECK(resnet->forward(torch::randn({2, 3, 32, 32})).sizes() == std::vector<std::int64_t>{2, 10});
}

TEST_CASE("the environment trains for real: accuracy rises on separable synthetic data") {
  DataSpec data;
  data.dataset = "synthetic";
  data.synthetic_train = 1024;
  data.synthetic_test = 256;
  data.synthetic_side = 6;
  data.synthetic_noise = 0.5;
  auto pair = std::make_shared<const DatasetPair>(load_dataset(data, 1));
  EnvSpec spec;
  for (int i = 0; i < 2; ++i) {
    WorkerSpec w;
    w.name = "w" + std::to_string(i);
    w.time_model = std::make_shared<BatchTimeModel>(std::vector<double>{1.0, 0.1 * (i + 1)});
    spec.simulation.cluster.workers.push_back(w);
  }
  spec.simulation.cluster.server_names = {"s"};
  spec.simulation.global_batch = 64;
  spec.training.model = small_mlp();
  LocalSgdEnv env(spec, pair, 3);
  const double before = env.evaluate().accuracy;
  RoundPlan plan;
  plan.aggregation = Aggregation::ModelAverage;
  plan.workers = {{32, 4}, {32, 4}};
  while (!env.epoch_finished()) env.run_round(plan);
  const EpochReport e = env.finish_epoch();
  CHECK(e.accuracy > before + 0.3);
  CHECK(e.accuracy > 0.8);
  CHECK(e.rounds == 4);  // 1024 samples / (2 workers * 32 * 4 steps)
}

TEST_CASE("timing-only mode runs the clock without training") {
  EnvSpec spec;
  WorkerSpec w;
  w.name = "w";
  w.time_model = std::make_shared<BatchTimeModel>(std::vector<double>{1.0, 1.0});
  spec.simulation.cluster.workers = {w, w};
  spec.simulation.cluster.workers[1].name = "v";
  spec.simulation.cluster.server_names = {"s"};
  spec.simulation.train_samples = 100;
  spec.training.timing_only = true;
  LocalSgdEnv env(spec, nullptr, 1);
  CHECK(env.message_bytes() > 0);  // the configured model's size
  RoundPlan plan;
  plan.workers = {{25, 1}, {25, 1}};
  while (!env.epoch_finished()) env.run_round(plan);
  const EpochReport e = env.finish_epoch();
  CHECK(e.rounds == 2);
  CHECK(std::isnan(e.accuracy));
}
