// `orchestra launch` end to end (issue 6): real worker processes on c10d, results a simulated run
// would write, refusals before any rank starts, a killed or hung worker, and --resume.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <torch/cuda.h>

#include "env/real/c10d_communicator.hpp"
#include "test_helpers.hpp"

namespace {

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
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - start > limit) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool wait_until(const std::function<bool()>& ready, std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  while (!ready()) {
    if (std::chrono::steady_clock::now() - start > limit) return false;
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
