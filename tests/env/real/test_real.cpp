// Real multi-process runs on c10d (issue 6): Gloo collectives between ranks, the same numbers as
// the in-process simulator, `orchestra launch` end to end, and a killed or hung worker.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
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

// ---------------------------------------------------------------------------------------------
// `orchestra launch` end to end.

std::string quick_config(int epochs, std::int64_t train, const std::string& policies) {
  return "name: real_test\nseed: 7\n"
         "data: {dataset: synthetic, synthetic: {train: " + std::to_string(train) + ", test: 128, side: 8}}\n"
         "model: {arch: mlp, hidden: [32]}\n"
         "training: {global_batch: 64, epochs: " + std::to_string(epochs) + ", target_accuracy: 0.5}\n"
         "cluster:\n  mode: real\n  workers:\n    - {name: fast, max_batch: 64}\n    - {name: slow, max_batch: 64}\n"
         "  perturbations:\n    - {worker: slow, slowdown: 3}\n"
         "policies: " + policies + "\n";
}

std::size_t data_rows(const std::string& csv_path) {
  const std::string text = testing::read_text(csv_path);
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines > 0 ? lines - 1 : 0;
}

// Starts `orchestra launch ...` in the background; its output goes to `log`.
pid_t spawn_launch(const std::string& args, const std::string& log) {
  const std::string command = std::string("exec ") + ORCHESTRA_BINARY + " launch " + args + " > " + log + " 2>&1";
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  REQUIRE(::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv), environ) == 0);
  return pid;
}

// The worker process of `launcher` whose RANK is `rank` (read from /proc: the launcher's children).
pid_t worker_pid(pid_t launcher, int rank) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = testing::read_text(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    if (parent != launcher) continue;
    const std::string environment = testing::read_text(entry.path() / "environ");
    if (environment.find(std::string("RANK=") + std::to_string(rank) + '\0') != std::string::npos &&
        environment.find(std::string("LOCAL_RANK=") + std::to_string(rank) + '\0') != std::string::npos)
      return static_cast<pid_t>(std::stoi(name));
  }
  return -1;
}

// Waits for `pid` at most `limit`; returns its exit code, or -1 (and kills it) when it overran.
int wait_for(pid_t pid, std::chrono::seconds limit, double* seconds) {
  const auto start = Clock::now();
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() - start > limit) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool wait_until(const std::function<bool()>& ready, std::chrono::seconds limit) {
  const auto start = Clock::now();
  while (!ready()) {
    if (Clock::now() - start > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// A worker fails mid-run (killed, or stopped so that it hangs): the run must end within the
// timeout with a clear message and a non-zero exit, keep its finished epochs, and resume.
void check_fault(int signal, const std::string& expected) {
  testing::TempDir dir;
  // Six epochs: the worker is hit within 0.1 s of the first one's end, long before the last.
  constexpr int kEpochs = 6;
  testing::write_text(dir / "c.yaml", quick_config(kEpochs, 4096, "[dsgd]"));
  const int timeout_s = 4;
  const std::string args = "--nproc 2 " + (dir / "c.yaml") + " --out " + (dir / "out") + " --timeout " + std::to_string(timeout_s) + " --quiet";
  const pid_t launcher = spawn_launch(args, dir / "log");
  const std::string epochs = dir / "out/dsgd/epochs.csv";
  REQUIRE(wait_until([&] { return data_rows(epochs) >= 1; }, std::chrono::seconds(240)));
  const pid_t victim = worker_pid(launcher, 1);
  REQUIRE(victim > 0);
  ::kill(victim, signal);
  double seconds = 0;
  const int code = wait_for(launcher, std::chrono::seconds(timeout_s + 40), &seconds);
  const std::string log = testing::read_text(dir / "log");
  INFO(log);
  REQUIRE(code != -1);  // no hang
  CHECK(code == 1);
  MESSAGE("the run stopped " << seconds << " s after the worker was hit");
  CHECK(log.find(expected) != std::string::npos);
  CHECK(log.find("continue with --resume") != std::string::npos);
  CHECK(log.find("Results up to the last finished epoch are in " + (dir / "out") + ";") != std::string::npos);
  const std::size_t kept = data_rows(epochs);
  CHECK(kept >= 1);
  CHECK(std::filesystem::exists(dir / "out/checkpoints/dsgd.pt"));
  if (signal == SIGSTOP) ::kill(victim, SIGKILL);  // the launcher killed it already; be sure

  // --resume with another budget is another experiment (issue 39): refused before any rank starts.
  testing::write_text(dir / "c.yaml", quick_config(static_cast<int>(kept) + 1, 4096, "[dsgd]"));
  const auto other = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch " + args + " --resume");
  CHECK(other.exit_code == 2);
  CHECK(other.output.find("--resume: policy dsgd ran with another config than this one: training.epochs") != std::string::npos);
  CHECK(data_rows(epochs) == kept);
  // A damaged checkpoint model: one line naming it before any rank starts, nothing changed.
  testing::write_text(dir / "c.yaml", quick_config(kEpochs, 4096, "[dsgd]"));
  const std::string model = testing::read_text(dir / "out/checkpoints/dsgd.pt");
  testing::write_text(dir / "out/checkpoints/dsgd.pt", model.substr(0, model.size() / 2));
  const auto damaged = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch " + args + " --resume");
  CHECK(damaged.exit_code == 2);
  CHECK(damaged.output.rfind("orchestra: data error: " + (dir / "out/checkpoints/dsgd.pt") + ": cannot load the checkpointed model", 0) == 0);
  CHECK(std::count(damaged.output.begin(), damaged.output.end(), '\n') == 1);
  CHECK(data_rows(epochs) == kept);
  testing::write_text(dir / "out/checkpoints/dsgd.pt", model);
  // With its own config it continues from the checkpoint: the same folder ends with every epoch.
  const auto resumed = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch " + args + " --resume");
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK(data_rows(epochs) == static_cast<std::size_t>(kEpochs));
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

TEST_CASE("real: orchestra launch runs dsgd, local-sgd and lbb on 2 processes and writes the results of a simulated run") {
  testing::TempDir dir;
  // 3x a step of ~0.2 ms is within the noise of a loaded machine (in CI a preempted step of the fast
  // worker once profiled slower than the slowed one), so the slow worker also takes 20 ms more a step.
  std::string config = quick_config(2, 512, "[dsgd, {name: local-sgd, H: 2}, {name: lbb, repetitions: 2, window: 4}]");
  const std::string slowdown = "slowdown: 3}";
  REQUIRE(config.find(slowdown) != std::string::npos);
  config.replace(config.find(slowdown), slowdown.size(), "slowdown: 3, add_ms: 20}");
  testing::write_text(dir / "c.yaml", config);
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch --nproc 2 " + (dir / "c.yaml") + " --out " + (dir / "out") +
                                      " --timeout 60 --quiet");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* label : {"dsgd", "local-sgd", "lbb"}) {
    const std::string folder = dir / ("out/" + std::string(label));
    for (const char* file : {"rounds.csv", "epochs.csv", "evals.csv", "summary.json", "config.json"})
      CHECK_MESSAGE(std::filesystem::exists(folder + "/" + file), folder << "/" << file);
    CHECK(data_rows(folder + "/epochs.csv") == 2);
    const auto summary = nlohmann::json::parse(testing::read_text(folder + "/summary.json"));
    CHECK(summary["epochs"] == 2);
    CHECK(summary["wall_time_s"].get<double>() > 0);  // a real run's clock is wall time, and says so
    CHECK_FALSE(summary.contains("sim_time_s"));
  }
  CHECK(std::filesystem::exists(dir / "out/comparison.md"));
  // LBB gave the 3x-slowed worker the smaller batch (Eq. 3 on the profiled times).
  const std::string rounds = testing::read_text(dir / "out/lbb/rounds.csv");
  std::istringstream fast_row(rounds.substr(rounds.rfind(",fast,") + 6)), slow_row(rounds.substr(rounds.rfind(",slow,") + 6));
  int fast_batch = 0, slow_batch = 0;
  fast_row >> fast_batch;
  slow_row >> slow_batch;
  CHECK(slow_batch < fast_batch);
}

TEST_CASE("real: orchestra launch refuses a simulated config and a worker count that does not match --nproc") {
  testing::TempDir dir;
  testing::write_text(dir / "sim.yaml", "name: s\ncluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1]}}\npolicies: [dsgd]\n");
  auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch --nproc 1 " + (dir / "sim.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("cluster.mode: launch runs real clusters") != std::string::npos);
  testing::write_text(dir / "c.yaml", quick_config(1, 256, "[dsgd]"));
  r = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch --nproc 3 " + (dir / "c.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("lists 2 workers but the launch starts 3 processes") != std::string::npos);
}

// A fresh launch replaced a user's file at a checkpoint's path (DIR/checkpoints/dsgd.json, "my
// notes") with the run's checkpoint. Now only a checkpoint is replaced: its own run's, again.
TEST_CASE("real: orchestra launch replaces a checkpoint of its own, never a user's file of a checkpoint's name") {
  testing::TempDir dir;
  testing::write_text(dir / "c.yaml", quick_config(1, 256, "[dsgd]"));
  const std::string launch = std::string(ORCHESTRA_BINARY) + " launch --nproc 2 --quiet " + (dir / "c.yaml") + " --out " + (dir / "out");
  REQUIRE(testing::run_command(launch).exit_code == 0);
  REQUIRE(std::filesystem::exists(dir / "out/checkpoints/dsgd.pt"));
  const auto again = testing::run_command(launch);  // its own checkpoints: replaced
  INFO(again.output);
  CHECK(again.exit_code == 0);
  for (const std::string file : {"dsgd.json", "dsgd.pt"}) {
    CAPTURE(file);
    const std::string own = testing::read_text(dir / ("out/checkpoints/" + file));
    testing::write_text(dir / ("out/checkpoints/" + file), "my notes\n");
    const auto refused = testing::run_command(launch);
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.rfind("orchestra launch: --out " + (dir / ("out/checkpoints/" + file)) + ": holds a file that is not a checkpoint", 0) == 0);
    CHECK(testing::read_text(dir / ("out/checkpoints/" + file)) == "my notes\n");
    testing::write_text(dir / ("out/checkpoints/" + file), own);
  }
}

TEST_CASE("real: a master port another program listens on is one line naming it, without libtorch's own log lines") {
  // A listener on a port the OS gave: what another launch, or any server, holds.
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  socklen_t length = sizeof address;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  const std::string port = std::to_string(ntohs(address.sin6_port));
  testing::TempDir dir;
  testing::write_text(dir / "c.yaml", quick_config(1, 256, "[dsgd]"));
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch --nproc 2 --quiet --master-port " + port + " " + (dir / "c.yaml") +
                                      " --out " + (dir / "out"));
  ::close(fd);
  CHECK(r.exit_code == 1);
  CHECK(r.output == "orchestra: communication error: cannot host the rendezvous store on port " + port +
                        ": Address already in use (another launch, or another program, listens there): choose another --master-port\n");
}

TEST_CASE("real: a killed worker ends the run within the timeout, keeps the finished epochs, and --resume finishes it") {
  check_fault(SIGKILL, "worker rank 1");
}

TEST_CASE("real: a hung worker ends the run within the timeout, keeps the finished epochs, and --resume finishes it") {
  check_fault(SIGSTOP, "no answer within the timeout");
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

TEST_CASE("real: orchestra launch --backend nccl where it cannot run, and runtime.device: cuda without a GPU, are one line each") {
  testing::TempDir dir;
  const std::string bin = ORCHESTRA_BINARY;
  testing::write_text(dir / "c.yaml", quick_config(1, 256, "[dsgd]"));
  const std::string why = env::backend_unavailable_reason("nccl");
  auto r = testing::run_command(bin + " launch --nproc 2 --backend nccl " + (dir / "c.yaml") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output == (why.empty() ? "orchestra launch: --backend nccl reduces CUDA tensors: set runtime.device: cuda (each rank then trains on its own GPU) (try: orchestra launch --help)\n"
                                  : "orchestra launch: --backend nccl: " + why + "; use --backend gloo (try: orchestra launch --help)\n"));

  // runtime.device: cuda on a machine whose libtorch has no CUDA, or with the GPUs hidden.
  std::string config = quick_config(1, 256, "[dsgd]");
  config.replace(config.find("policies:"), 9, "runtime: {device: cuda}\npolicies:");
  testing::write_text(dir / "cuda.yaml", config);
  const auto line = std::to_string(std::count(config.begin(), config.begin() + static_cast<std::ptrdiff_t>(config.find("runtime:")), '\n') + 1);
  r = testing::run_command("CUDA_VISIBLE_DEVICES= " + bin + " launch --nproc 2 " + (dir / "cuda.yaml") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output.rfind("orchestra: config error: " + (dir / "cuda.yaml") + ":" + line + ": runtime.device: 'cuda' needs a GPU, but this libtorch ", 0) == 0);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);

  if (why.empty() && torch::cuda::device_count() < 2) {  // a one-GPU machine: NCCL cannot put two ranks on it
    r = testing::run_command(bin + " launch --nproc 2 --backend nccl " + (dir / "cuda.yaml") + " --quiet");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--backend nccl needs one GPU per rank: 2 ranks on this machine, 1 GPU visible") != std::string::npos);
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
