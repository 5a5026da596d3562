// Real multi-process runs on c10d (issue 6): Gloo collectives between ranks, the same numbers as
// the in-process simulator, and the devices and backends (`orchestra launch` end to end: test_launch.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "env/real/c10d_backend_registry.hpp"
#include "env/real/c10d_communicator.hpp"
#include "env/train/device.hpp"
#include "common/errors.hpp"
#include "env/train/local_sgd_env.hpp"
#include "env/real/real_worker.hpp"
#include "test_helpers.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kSeed = 7;

env::DataSpec small_data() {
  env::DataSpec d;
  d.dataset = "synthetic";
  d.synthetic_train = 256;
  d.synthetic_test = 64;
  d.synthetic_side = 8;
  return d;
}

env::TrainingSpec small_training(env::ShardRule shards = env::ShardRule::Epoch) {
  env::TrainingSpec t;
  t.model.hidden = {16};
  t.shards = shards;
  return t;
}

env::RoundPlan gradient_plan(int b0, int b1) {
  env::RoundPlan p;
  p.workers = {{b0, 1}, {b1, 1}};
  return p;
}

env::RoundPlan average_plan(int batch, int steps) {
  env::RoundPlan p;
  p.aggregation = env::Aggregation::ModelAverage;
  p.workers = {{batch, steps}, {batch, steps}};
  return p;
}

using State = std::vector<torch::Tensor>;

// Worker i's name: a, b, c, ...
std::string worker_name(int i) { return std::string(1, static_cast<char>('a' + i)); }

// `servers` servers s0, s1, ... holding the workers in turn (worker i on server i mod servers).
void place_on_servers(env::ClusterSpec& cluster, int servers) {
  cluster.server_names.clear();
  for (int s = 0; s < servers; ++s) cluster.server_names.push_back("s" + std::to_string(s));
  for (std::size_t i = 0; i < cluster.workers.size(); ++i) cluster.workers[i].server = static_cast<int>(i) % servers;
}

// The in-process reference: the simulator's LocalSgdEnv on the same seed and data, on the CPU.
State in_process(const std::vector<env::RoundPlan>& plans, const std::shared_ptr<const env::DatasetPair>& data, int workers = 2,
                 int servers = 1, env::ShardRule shards = env::ShardRule::Epoch) {
  env::EnvSpec spec;
  for (int i = 0; i < workers; ++i) {
    env::WorkerSpec w;
    w.name = worker_name(i);
    w.time_model = std::make_shared<env::BatchTimeModel>(std::vector<double>{1.0, 0.1});
    spec.simulation.cluster.workers.push_back(w);
  }
  place_on_servers(spec.simulation.cluster, servers);
  spec.simulation.global_batch = 64;
  spec.training = small_training(shards);
  env::LocalSgdEnv environment(spec, data, kSeed, {1, 8, 8});
  for (const auto& p : plans) environment.run_round(p);
  State out = environment.replicas()->state(0);
  for (auto& t : out) t = t.detach().clone();
  return out;
}

// `world` ranks as threads (two by default), each with its own process group (Gloo by default)
// over a TCPStore on a port from the OS, training on env::rank_device(device, rank); the first
// error of any rank is rethrown (gloo's test/base_test.h does the same).
std::vector<State> ranks(const std::vector<env::RoundPlan>& plans, const std::shared_ptr<const env::DatasetPair>& data, int world = 2,
                         const std::string& backend = "gloo", const std::string& device = "cpu", int servers = 1,
                         env::ShardRule shards = env::ShardRule::Epoch) {
  env::RendezvousServer server(0, std::chrono::seconds(30));
  std::vector<State> states(static_cast<std::size_t>(world));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(world));
  std::mutex init;  // model initialization draws from libtorch's global generator
  auto rank_main = [&](int rank) {
    try {
      env::RendezvousSpec spec;
      spec.master_port = server.port();
      spec.rank = rank;
      spec.world_size = world;
      spec.local_rank = rank;
      spec.timeout = std::chrono::seconds(30);
      spec.backend = backend;
      spec.device = env::rank_device(device, rank);
      env::C10dCommunicator comm(spec);
      env::RealWorkerSpec ws;
      ws.training = small_training(shards);
      for (int i = 0; i < world; ++i) {
        env::WorkerSpec w;
        w.name = worker_name(i);
        w.max_batch = 1024;
        ws.cluster.workers.push_back(w);
      }
      place_on_servers(ws.cluster, servers);
      ws.seed = kSeed;
      ws.device = spec.device;
      std::unique_ptr<env::RealWorker> worker;
      {
        std::lock_guard<std::mutex> lock(init);
        worker = std::make_unique<env::RealWorker>(ws, data, comm);
      }
      for (std::size_t r = 0; r < plans.size(); ++r) worker->run_round(static_cast<std::int64_t>(r), plans[r], 0.0);
      State s = worker->replicas().model(0).parameters();
      for (auto& t : s) t = t.detach().clone();
      states[static_cast<std::size_t>(rank)] = s;
    } catch (...) {
      errors[static_cast<std::size_t>(rank)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back(rank_main, r);
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return states;
}

double max_difference(const State& a, const State& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, (a[k].cpu() - b[k].cpu()).abs().max().item<double>());
  return worst;
}

// `workers` ranks on `servers` servers against the simulator, after `plans`.
void check_matches_in_process(const std::vector<env::RoundPlan>& plans, int workers = 2, int servers = 1,
                              env::ShardRule shards = env::ShardRule::Epoch) {
  auto data = std::make_shared<const env::DatasetPair>(env::make_synthetic(small_data(), kSeed));
  const State reference = in_process(plans, data, workers, servers, shards);
  const auto states = ranks(plans, data, workers, "gloo", "cpu", servers, shards);
  for (const State& rank : states) {
    CHECK(max_difference(states[0], rank) == 0.0);  // every rank holds the same model: one all-reduce result
    CHECK(max_difference(rank, reference) < 1e-6);
  }
  // Training moved the weights: the comparison is not between two untouched initializations.
  auto fresh = std::make_shared<const env::DatasetPair>(env::make_synthetic(small_data(), kSeed));
  CHECK(max_difference(in_process({}, fresh, workers, servers), reference) > 1e-4);
}


}  // namespace

TEST_CASE("real: after one round of model averaging both ranks equal the in-process average (local-sgd)") {
  check_matches_in_process({average_plan(16, 3)});
}

TEST_CASE("real: a gradient all-reduce round equals the simulator's SSGD step (dsgd, equal batches)") {
  check_matches_in_process({gradient_plan(32, 32), gradient_plan(32, 32)});
}

TEST_CASE("real: unequal batches weighted by B_i/B, then averaging, equal the simulator (lbb's plans)") {
  check_matches_in_process({gradient_plan(48, 16), gradient_plan(60, 4), gradient_plan(64, 0)});
}

TEST_CASE("real: a rank that never arrives fails the rendezvous within the timeout, with a clear message") {
  env::RendezvousServer server(0, std::chrono::seconds(5));
  env::RendezvousSpec spec;
  spec.master_port = server.port();
  spec.world_size = 2;
  spec.timeout = std::chrono::seconds(2);
  const auto start = Clock::now();
  try {
    env::C10dCommunicator comm(spec);
    FAIL("the process group was built without rank 1");
  } catch (const common::CommError& e) {
    CHECK(std::string(e.what()).find("gloo rank 0/2") != std::string::npos);
  }
  CHECK(Clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("real: FedNova with unequal local steps and an outer optimizer equal the simulator, round after round") {
  env::RoundPlan plan = average_plan(16, 3);
  plan.workers[1].local_steps = 1;  // 3 steps against 1: FedNova's case
  plan.weighting = env::AverageWeighting::FedNova;
  plan.outer = env::OuterOptimizer{0.7, 0.9, true};
  check_matches_in_process({plan, plan, plan});  // the outer momentum carries over between rounds
}

TEST_CASE("real: an epoch's last rounds, where one worker has no data left, equal the simulator under both weightings") {
  // 256 samples shared 3:1, B = 16, tau = 3: worker 1's 4 batches are gone after round 2, worker 0
  // trains rounds 3 and 4 alone (uniform: it sets the model; all_workers: averaged with the global model).
  env::RoundPlan plan = average_plan(16, 3);
  plan.data_shares = {0.75, 0.25};
  std::vector<State> finals;
  for (env::AverageWeighting weighting : {env::AverageWeighting::Uniform, env::AverageWeighting::AllWorkers}) {
    CAPTURE(env::weighting_name(weighting));
    plan.weighting = weighting;
    check_matches_in_process({plan, plan, plan, plan});
    finals.push_back(in_process({plan, plan, plan, plan}, std::make_shared<const env::DatasetPair>(env::make_synthetic(small_data(), kSeed))));
  }
  CHECK(max_difference(finals[0], finals[1]) > 1e-4);  // the two weightings train differently
}

TEST_CASE("real: shards: rebalance deals an epoch's tail as the simulator does, and trains differently from fixed shards") {
  // The case above: at round 2 worker 1 has 16 samples left for a round of 48 while worker 0 holds
  // 144; under rebalance every rank reshares the 160 left 3:1 alike, and worker 1 keeps training.
  env::RoundPlan plan = average_plan(16, 3);
  plan.data_shares = {0.75, 0.25};
  const std::vector<env::RoundPlan> plans{plan, plan, plan, plan};
  check_matches_in_process(plans, 2, 1, env::ShardRule::Rebalance);
  auto data = std::make_shared<const env::DatasetPair>(env::make_synthetic(small_data(), kSeed));
  CHECK(max_difference(in_process(plans, data, 2, 1, env::ShardRule::Rebalance), in_process(plans, data)) > 1e-4);
}

TEST_CASE("real: MLLSGD's in-server averages with unequal steps, under FedNova with an outer optimizer and under all_workers, "
          "equal the simulator (one description of the averaging round)") {
  // Four workers on two servers (a, c on s0; b, d on s1), H1 = 2: chunks of two steps, each closed
  // by an average inside each server over the workers that stepped; d takes one step only, so s1's
  // second in-server average has b alone. Data 3:3:2:1 (85, 85, 57, 29 samples): in the third round
  // every shard runs short, and a takes one step of 5 samples.
  env::RoundPlan plan;
  plan.aggregation = env::Aggregation::ModelAverage;
  plan.workers = {{8, 5}, {8, 4}, {8, 3}, {8, 1}};
  plan.server_average_every = 2;
  plan.data_shares = {3, 3, 2, 1};
  for (env::AverageWeighting weighting : {env::AverageWeighting::FedNova, env::AverageWeighting::AllWorkers}) {
    CAPTURE(env::weighting_name(weighting));
    plan.weighting = weighting;
    plan.outer = weighting == env::AverageWeighting::FedNova ? std::optional<env::OuterOptimizer>(env::OuterOptimizer{0.7, 0.9, true})
                                                             : std::nullopt;
    check_matches_in_process({plan, plan, plan}, 4, 2);
  }
}

// ---------------------------------------------------------------------------------------------
// Devices and backends (issue 17). Where NCCL or a GPU is missing (CI), the refusals; on a GPU
// machine (scripts/gpu_check.sh), ranks training on the GPU against the simulator on the CPU.

TEST_CASE("real: every c10d backend that can run here sums, broadcasts, gathers and meets at a barrier alike (ranks as threads)") {
  int backends_run = 0;
  for (const auto& backend : env::c10d_backends()) {
    CAPTURE(backend.name);
    const int gpus = static_cast<int>(torch::cuda::device_count());
    if (!backend.unavailable().empty() || (backend.one_gpu_per_rank && gpus < 1)) continue;
    const int world = backend.one_gpu_per_rank ? std::min(2, gpus) : 2;
    env::RendezvousServer server(0, std::chrono::seconds(30));
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(world));
    std::vector<std::vector<double>> seen(static_cast<std::size_t>(world));
    auto rank_main = [&](int rank) {
      try {
        env::RendezvousSpec spec;
        spec.master_port = server.port();
        spec.rank = rank;
        spec.world_size = world;
        spec.local_rank = rank;
        spec.timeout = std::chrono::seconds(30);
        spec.backend = backend.name;
        spec.device = backend.one_gpu_per_rank ? torch::Device(torch::kCUDA, rank) : torch::Device(torch::kCPU);
        env::C10dCommunicator comm(spec);
        auto& out = seen[static_cast<std::size_t>(rank)];
        std::vector<torch::Tensor> sum{torch::full({3}, rank + 1.0, torch::kFloat32).to(spec.device)};
        comm.all_reduce_sum(sum, "test sum");
        out.push_back(sum[0].cpu()[2].item<double>());
        torch::Tensor value = torch::full({2}, 10.0 * (rank + 1), torch::kFloat32).to(spec.device);
        comm.broadcast(value, world - 1, "test broadcast");
        out.push_back(value.cpu()[0].item<double>());
        const torch::Tensor gathered = comm.all_gather(torch::full({1}, rank + 0.5, torch::kFloat32).to(spec.device), "test gather");
        out.push_back(gathered[world - 1][0].item<double>());
        comm.barrier("test barrier");
      } catch (...) {
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
    };
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r) threads.emplace_back(rank_main, r);
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    const double sum = world * (world + 1) / 2.0;
    for (const auto& s : seen) CHECK(s == std::vector<double>{sum, 10.0 * world, world - 0.5});
    ++backends_run;
  }
  CHECK(backends_run >= 1);  // Gloo runs on every machine the README supports
}

TEST_CASE("real: the nccl backend where it cannot run, or for a rank on the CPU, is refused with one line before any rendezvous") {
  const std::string why = env::backend_unavailable_reason("nccl");
  if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA)) CHECK(why.rfind("this libtorch has no CUDA", 0) == 0);
  env::RendezvousSpec spec;
  spec.backend = "nccl";
  spec.master_port = 1;  // nobody listens: the refusal must come first
  spec.timeout = std::chrono::seconds(2);
  try {
    env::C10dCommunicator comm(spec);
    FAIL("an nccl communicator was built for a rank on the CPU");
  } catch (const common::CommError& e) {
    CHECK(std::string(e.what()) == (why.empty() ? "the nccl backend reduces CUDA tensors, but rank 0 trains on the CPU (set runtime.device: cuda)"
                                                : "the nccl backend is not available: " + why));
  }
}

TEST_CASE("real: two ranks training on the GPU, reducing over Gloo, equal the in-process simulator on the CPU" *
          doctest::skip(!torch::cuda::is_available())) {
  auto data = std::make_shared<const env::DatasetPair>(env::make_synthetic(small_data(), kSeed));
  for (const auto& plans : {std::vector<env::RoundPlan>{gradient_plan(24, 40), gradient_plan(32, 32)},
                            std::vector<env::RoundPlan>{average_plan(16, 3), average_plan(8, 2)}}) {
    const State reference = in_process(plans, data);
    const auto states = ranks(plans, data, 2, "gloo", "cuda");
    CHECK(states[0][0].device().is_cuda());
    CHECK(max_difference(states[0], states[1]) == 0.0);
    CHECK(max_difference(states[0], reference) < 1e-4);
  }
}

TEST_CASE("real: NCCL, one rank per GPU (one rank on a one-GPU machine), equals the in-process simulator on the CPU" *
          doctest::skip(!torch::cuda::is_available() || !env::backend_unavailable_reason("nccl").empty())) {
  auto data = std::make_shared<const env::DatasetPair>(env::make_synthetic(small_data(), kSeed));
  const int world = std::min(2, static_cast<int>(torch::cuda::device_count()));
  env::RoundPlan gradient, averaging;
  averaging.aggregation = env::Aggregation::ModelAverage;
  for (int i = 0; i < world; ++i) {
    gradient.workers.push_back({32, 1});
    averaging.workers.push_back({16, 3});
  }
  for (const auto& plans : {std::vector<env::RoundPlan>{gradient, gradient}, std::vector<env::RoundPlan>{averaging, averaging}}) {
    const State reference = in_process(plans, data, world);
    const auto states = ranks(plans, data, world, "nccl", "cuda");
    CHECK(states[0][0].device().is_cuda());
    for (const auto& s : states) CHECK(max_difference(s, reference) < 1e-4);
  }
}
