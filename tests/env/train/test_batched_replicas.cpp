// Batched replicas (runtime.replicas: batched) against the sequential ReplicaSet: the same steps
// give the same parameters up to floating-point reassociation, padding and idle replicas change
// nothing, and the environment gives the same epoch either way.
#include <doctest/doctest.h>

#include <memory>
#include <numeric>

#include "env/sim/cluster.hpp"
#include "env/train/batched_replicas.hpp"
#include "env/train/local_sgd_env.hpp"
#include "env/train/replicas.hpp"

using namespace env;

namespace {

using State = std::vector<torch::Tensor>;

// The largest ||a_k - b_k|| / ||b_k|| over the tensors.
double relative_difference(const State& a, const State& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    worst = std::max(worst, ((a[k] - b[k]).norm() / b[k].norm().clamp_min(1e-12)).item<double>());
  return worst;
}

bool bitwise_equal(const State& a, const State& b) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!torch::equal(a[k], b[k])) return false;
  return true;
}

Dataset random_samples(std::int64_t samples, std::vector<std::int64_t> shape) {
  torch::manual_seed(3);
  shape.insert(shape.begin(), samples);
  return {torch::randn(shape), torch::randint(10, {samples}, torch::kInt64), 10};
}

// Index lists the spans point into; kept alive by the test.
struct Spans {
  std::vector<std::vector<std::int64_t>> storage;
  IndexSpan add(std::int64_t first, std::int64_t count) {
    storage.emplace_back(static_cast<std::size_t>(count));
    std::iota(storage.back().begin(), storage.back().end(), first);
    return {storage.back().data(), count};
  }
  Spans() { storage.reserve(256); }
};

ModelSpec mlp() {
  ModelSpec m;
  m.hidden = {16, 12};
  return m;
}

ModelSpec cnn() {
  ModelSpec m;
  m.arch = "cnn";
  return m;
}

const OptimizerSpec kSgd{0.1, 0.9, 5e-4};

// Unequal local steps and batch sizes: worker 0 two steps of 4, worker 1 three steps of 6, 2
// and 5 samples, worker 2 none (idle in every slot).
std::vector<std::vector<IndexSpan>> unequal_steps(Spans& s) {
  return {{s.add(0, 4), s.add(4, 4)}, {s.add(10, 6), s.add(20, 2), s.add(30, 5)}, {}};
}

}  // namespace

TEST_CASE("batched local steps with unequal batches and steps match the sequential replicas") {
  for (const ModelSpec& model : {mlp(), cnn()}) {
    CAPTURE(model.arch);
    const std::vector<std::int64_t> shape = model.arch == "cnn" ? std::vector<std::int64_t>{1, 12, 12} : std::vector<std::int64_t>{1, 4, 4};
    const Dataset data = random_samples(64, shape);
    ReplicaSet sequential(model, shape, 10, 3, kSgd, 7);
    BatchedReplicaSet batched(model, shape, 10, 3, kSgd, 7);
    for (int w = 0; w < 3; ++w) CHECK(bitwise_equal(batched.state(w), sequential.state(w)));  // the same start
    Spans s;
    for (int round = 0; round < 3; ++round) {  // momentum carries over between calls
      const auto batches = unequal_steps(s);
      const std::vector<double> a = sequential.local_steps(data, batches), b = batched.local_steps(data, batches);
      REQUIRE(a.size() == 5);
      REQUIRE(b.size() == 5);
      for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i] == doctest::Approx(a[i]).epsilon(1e-5));
    }
    for (int w = 0; w < 3; ++w) CHECK(relative_difference(batched.state(w), sequential.state(w)) < 1e-5);
  }
}

TEST_CASE("several replica sets stepped together (vectorized environments) follow what each computes alone, each with its own optimizer") {
  // Three environments' replicas: 3, 2 and 4 workers, their own seeds, learning rates, batches and
  // numbers of steps (the 4-worker set's worker 3 idles); the together-run pads every row to the
  // widest batch of all three sets, stacks their rows, and hands each set its own gradients.
  for (const ModelSpec& model : {mlp(), cnn()}) {
    CAPTURE(model.arch);
    const std::vector<std::int64_t> shape = model.arch == "cnn" ? std::vector<std::int64_t>{1, 12, 12} : std::vector<std::int64_t>{1, 4, 4};
    const Dataset data = random_samples(64, shape);
    const std::vector<int> workers{3, 2, 4};
    const std::vector<OptimizerSpec> optimizers{kSgd, {0.05, 0.5, 0.0}, {0.2, 0.9, 1e-3}};
    std::vector<std::unique_ptr<BatchedReplicaSet>> alone, together;
    for (std::size_t j = 0; j < workers.size(); ++j) {
      alone.push_back(std::make_unique<BatchedReplicaSet>(model, shape, 10, workers[j], optimizers[j], 11 + j));
      together.push_back(std::make_unique<BatchedReplicaSet>(model, shape, 10, workers[j], optimizers[j], 11 + j));
    }
    Spans s;
    for (int round = 0; round < 3; ++round) {  // momentum carries over between rounds
      const std::vector<std::vector<std::vector<IndexSpan>>> batches{
          unequal_steps(s), {{s.add(40, 3)}, {s.add(44, 8), s.add(52, 8), s.add(1, 8), s.add(9, 8)}},
          {{s.add(2, 5), s.add(7, 5)}, {s.add(12, 1)}, {s.add(13, 7), s.add(20, 7), s.add(27, 7)}, {}}};
      std::vector<BatchedReplicaSet::LocalStepsJob> jobs;
      for (std::size_t j = 0; j < workers.size(); ++j) jobs.push_back({together[j].get(), &data, &batches[j]});
      const std::vector<std::vector<double>> merged = BatchedReplicaSet::local_steps_together(jobs);
      REQUIRE(merged.size() == 3);
      for (std::size_t j = 0; j < workers.size(); ++j) {
        CAPTURE(j);
        const std::vector<double> own = alone[j]->local_steps(data, batches[j]);
        REQUIRE(merged[j].size() == own.size());
        for (std::size_t i = 0; i < own.size(); ++i) CHECK(merged[j][i] == doctest::Approx(own[i]).epsilon(1e-5));
      }
    }
    for (std::size_t j = 0; j < workers.size(); ++j)
      for (int w = 0; w < workers[j]; ++w) {
        CAPTURE(j);
        CAPTURE(w);
        CHECK(relative_difference(together[j]->state(w), alone[j]->state(w)) < 1e-5);
      }
    // The idle worker of the third set was never touched: still its starting weights.
    CHECK(bitwise_equal(together[2]->state(3), BatchedReplicaSet(model, shape, 10, 4, optimizers[2], 13).state(3)));
  }
}

TEST_CASE("replica sets of different models, or one list of batches too few, are refused before anything steps") {
  const Dataset small = random_samples(16, {1, 4, 4});
  ModelSpec wider = mlp();
  wider.hidden = {20, 12};
  BatchedReplicaSet a(mlp(), {1, 4, 4}, 10, 2, kSgd, 1), b(wider, {1, 4, 4}, 10, 2, kSgd, 1);
  Spans s;
  const std::vector<std::vector<IndexSpan>> two{{s.add(0, 4)}, {s.add(4, 4)}}, one{{s.add(0, 4)}};
  const State before = a.state(0);
  CHECK_THROWS_WITH_AS(BatchedReplicaSet::local_steps_together({{&a, &small, &two}, {&b, &small, &two}}),
                       doctest::Contains("must hold the same model"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(BatchedReplicaSet::local_steps_together({{&a, &small, &one}}), "local_steps: one list of batches per worker",
                       std::invalid_argument);
  CHECK(bitwise_equal(a.state(0), before));
}

// What holds bit for bit on every CPU holds by construction: an idle replica's rows are never
// written (sgd_update touches the stepping rows only), and a replica's numbers never meet another
// replica's (each is its own matrix of the batched products), so what fills the rest of a slot
// cannot reach them. How wide a slot is padded, though, picks the BLAS kernel (its blocking, FMA
// or not) for the replica's own products: alone and padded agree to float32 rounding, not to the
// bit (OpenBLAS's Haswell and Zen kernels differ in the last bits where SkylakeX's do not).
TEST_CASE("an idle replica keeps its parameters and momentum exactly, padding contents do not matter, padding width within rounding") {
  const std::vector<std::int64_t> shape{1, 4, 4};
  const Dataset data = random_samples(64, shape);
  Spans s;
  BatchedReplicaSet a(mlp(), shape, 10, 3, kSgd, 7), b(mlp(), shape, 10, 3, kSgd, 7), reference(mlp(), shape, 10, 3, kSgd, 7);
  // Worker 2 is idle in the first call: exactly its initial parameters afterwards.
  const State start = a.state(2);
  a.local_steps(data, unequal_steps(s));
  CHECK(bitwise_equal(a.state(2), start));
  // Worker 0's narrow batches are padded to worker 1's width, the same in both calls; what worker 1
  // trains on (and so what fills its own rows) must not change worker 0's result by a single bit.
  b.local_steps(data, {{s.add(0, 4), s.add(4, 4)}, {s.add(40, 6), s.add(50, 2), s.add(55, 5)}, {}});
  CHECK(bitwise_equal(a.state(0), b.state(0)));
  CHECK_FALSE(bitwise_equal(a.state(1), b.state(1)));
  // Padding width: worker 0 alone (width 4) against worker 0 beside a width-8 worker 1. The padded
  // samples add exact zeros; only the kernels' summation order may differ.
  BatchedReplicaSet alone(mlp(), shape, 10, 2, kSgd, 7), padded(mlp(), shape, 10, 2, kSgd, 7);
  const State before = alone.state(0);
  alone.local_steps(data, {{s.add(0, 4)}, {s.add(8, 4)}});
  padded.local_steps(data, {{s.add(0, 4)}, {s.add(8, 8)}});
  CHECK(relative_difference(alone.state(0), padded.state(0)) < 1e-6);
  CHECK(relative_difference(alone.state(0), before) > 1e-3);  // the step moved it: the 1e-6 is not trivially met
  // Momentum of the idle worker: its first real step equals a fresh replica's first step (the same
  // slot, the same width, the same numbers: exact).
  a.local_steps(data, {{}, {}, {s.add(0, 4)}});
  reference.local_steps(data, {{}, {}, {s.add(0, 4)}});
  CHECK(bitwise_equal(a.state(2), reference.state(2)));
}

TEST_CASE("batched gradient steps (LBB's unequal batches), averaging and FedNova with an outer optimizer match the sequential replicas") {
  const std::vector<std::int64_t> shape{1, 4, 4};
  const Dataset data = random_samples(64, shape);
  ReplicaSet sequential(mlp(), shape, 10, 3, kSgd, 9);
  BatchedReplicaSet batched(mlp(), shape, 10, 3, kSgd, 9);
  Spans s;
  const std::vector<IndexSpan> lbb{s.add(0, 3), s.add(3, 9), s.add(12, 20)};
  for (int step = 0; step < 3; ++step)
    CHECK(batched.gradient_step(data, lbb) == doctest::Approx(sequential.gradient_step(data, lbb)).epsilon(1e-5));
  for (int w = 0; w < 3; ++w) CHECK(relative_difference(batched.state(w), sequential.state(w)) < 1e-5);

  // MLLSGD's in-server average: members {0, 1} weighted 1/4, 3/4 into receivers {0, 1} only.
  auto steps = unequal_steps(s);
  sequential.local_steps(data, steps);
  batched.local_steps(data, steps);
  sequential.average({0, 1}, {0.25, 0.75}, {0, 1});
  batched.average({0, 1}, {0.25, 0.75}, {0, 1});
  for (int w = 0; w < 3; ++w) CHECK(relative_difference(batched.state(w), sequential.state(w)) < 1e-5);
  CHECK(relative_difference(batched.state(0), batched.state(1)) == 0.0);
  CHECK(relative_difference(batched.state(0), batched.state(2)) > 1e-3);  // not a receiver

  // Two rounds of FedNova with Nesterov outer momentum (its state carries over).
  const OuterOptimizer outer{0.7, 0.9, true};
  for (int round = 0; round < 2; ++round) {
    sequential.snapshot_global();
    batched.snapshot_global();
    steps = unequal_steps(s);
    sequential.local_steps(data, steps);
    batched.local_steps(data, steps);
    GlobalAverage global;
    global.members = {0, 1};
    global.weights = {0.4, 0.6};
    global.steps = {2, 3};
    global.fednova = true;
    global.outer = outer;
    sequential.global_update(global);
    batched.global_update(global);
  }
  for (int w = 0; w < 3; ++w) CHECK(relative_difference(batched.state(w), sequential.state(w)) < 1e-5);
  CHECK(batched.evaluate(data).accuracy == doctest::Approx(sequential.evaluate(data).accuracy).epsilon(1e-6));
}

TEST_CASE("the ResNet falls back to the sequential replicas, the MLP and the CNN stack, auto batches the MLP, and the CNN only off the CPU") {
  ModelSpec resnet;
  resnet.arch = "resnet";
  CHECK(dynamic_cast<ReplicaSet*>(make_replicas(ReplicaMode::Batched, resnet, {3, 8, 8}, 10, 2, kSgd, 1, torch::kCPU).get()));
  CHECK(dynamic_cast<BatchedReplicaSet*>(make_replicas(ReplicaMode::Batched, cnn(), {1, 12, 12}, 10, 2, kSgd, 1, torch::kCPU).get()));
  CHECK(dynamic_cast<ReplicaSet*>(make_replicas(ReplicaMode::Sequential, mlp(), {1, 4, 4}, 10, 2, kSgd, 1, torch::kCPU).get()));
  CHECK_THROWS_AS(BatchedReplicaSet(resnet, {3, 8, 8}, 10, 2, kSgd, 1), std::invalid_argument);
  CHECK(dynamic_cast<BatchedReplicaSet*>(make_replicas(ReplicaMode::Auto, mlp(), {1, 4, 4}, 10, 2, kSgd, 1, torch::kCPU).get()));
  CHECK(dynamic_cast<ReplicaSet*>(make_replicas(ReplicaMode::Auto, cnn(), {1, 12, 12}, 10, 2, kSgd, 1, torch::kCPU).get()));
  CHECK(prefers_batched("cnn", torch::Device(torch::kCUDA, 0)));
  CHECK_FALSE(prefers_batched("resnet", torch::Device(torch::kCUDA, 0)));
}

namespace {

// One epoch of the simulated cluster (3 unequal workers) under `plan`, replicas as `mode`.
std::pair<State, double> one_epoch(ReplicaMode mode, const RoundPlan& plan, const std::shared_ptr<const DatasetPair>& data) {
  EnvSpec spec;
  for (double a1 : {0.1, 0.2, 0.4}) {
    WorkerSpec w;
    w.name = "w" + std::to_string(spec.simulation.cluster.workers.size());
    w.time_model = std::make_shared<BatchTimeModel>(std::vector<double>{1.0, a1});
    spec.simulation.cluster.workers.push_back(w);
  }
  spec.simulation.cluster.server_names = {"s"};
  spec.simulation.global_batch = 64;
  spec.training.model = mlp();
  spec.training.replicas = mode;
  LocalSgdEnv environment(spec, data, 21, {1, 8, 8});
  do environment.run_round(plan);
  while (!environment.epoch_finished());
  const double accuracy = environment.finish_epoch().accuracy;
  return {environment.replicas()->state(0), accuracy};
}

}  // namespace

TEST_CASE("one epoch of the environment: batched and sequential agree within 1e-4 relative and 0.5 accuracy points") {
  DataSpec d;
  d.dataset = "synthetic";
  d.synthetic_train = 1024;
  d.synthetic_test = 256;
  d.synthetic_side = 8;
  const auto data = std::make_shared<const DatasetPair>(load_dataset(d, 4));
  RoundPlan gradient;  // LBB-like: unequal batches under gradient all-reduce
  gradient.workers = {{12, 1}, {20, 1}, {32, 1}};
  RoundPlan local;  // local SGD: equal batches and steps
  local.aggregation = Aggregation::ModelAverage;
  local.workers = {{16, 4}, {16, 4}, {16, 4}};
  RoundPlan orchestra = local;  // Orchestra-like: unequal steps tau_n and data shares
  orchestra.workers = {{16, 8}, {16, 4}, {16, 2}};
  for (const auto& [name, plan] : std::vector<std::pair<const char*, RoundPlan>>{{"gradient", gradient}, {"local", local}, {"orchestra", orchestra}}) {
    CAPTURE(name);
    const auto [seq_state, seq_accuracy] = one_epoch(ReplicaMode::Sequential, plan, data);
    const auto [bat_state, bat_accuracy] = one_epoch(ReplicaMode::Batched, plan, data);
    CHECK(relative_difference(bat_state, seq_state) < 1e-4);
    CHECK(std::abs(bat_accuracy - seq_accuracy) <= 0.005);
    // Each path is deterministic by itself.
    CHECK(bitwise_equal(one_epoch(ReplicaMode::Batched, plan, data).first, bat_state));
  }
}

// FedNova's a_i counts a round's momentum steps from a fresh buffer. Two workers on one batch (a
// near-constant gradient at lr 1e-5) take 1 and 8 steps a round: each one's displacement is a_i
// gradients, round after round, so divided by a_i the two are equal. The buffers carried from one
// round to the next made the 1-step worker's 2.3x the 8-step worker's by round 10 (3.5x later).
TEST_CASE("FedNova rounds start from fresh momentum buffers, so a worker's displacement is a_i gradients") {
  const std::vector<std::int64_t> shape{1, 8, 8};
  const Dataset data = random_samples(8, shape);
  Spans spans;
  const IndexSpan batch = spans.add(0, 8);
  const OptimizerSpec slow{1e-5, 0.9, 0.0};
  GlobalAverage global;
  global.members = {0, 1};
  global.weights = {0.5, 0.5};
  global.steps = {1, 8};
  global.fednova = true;
  const double a0 = fednova_effective_steps(1, 0.9), a1 = fednova_effective_steps(8, 0.9);
  std::vector<std::unique_ptr<WorkerReplicas>> sets;
  sets.push_back(std::make_unique<ReplicaSet>(mlp(), shape, 10, 2, slow, 5));
  sets.push_back(std::make_unique<BatchedReplicaSet>(mlp(), shape, 10, 2, slow, 5));
  for (auto& set : sets) {
    for (int round = 0; round < 10; ++round) {
      CAPTURE(round);
      set->snapshot_global();
      set->reset_momentum();
      const State start = set->state(0);
      set->local_steps(data, {{batch}, std::vector<IndexSpan>(8, batch)});
      const double d0 = (start[0] - set->state(0)[0]).norm().item<double>();
      const double d1 = (start[0] - set->state(1)[0]).norm().item<double>();
      CHECK(d1 / a1 == doctest::Approx(d0 / a0).epsilon(0.01));
      set->global_update(global);
    }
  }
}
