// `orchestra train` as processes: a killed agent does not stop training, --resume after a killed
// trainer continues from the checkpoint's update counter, and a trained policy deploys as
// `orchestra-a3c` in `orchestra run`. The toy environment (agents/toy_barrier_env.hpp) with a few
// ms per step keeps each run to seconds; every wait below has a deadline.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "agents/learner.hpp"
#include "agents/policy_file.hpp"
#include "orchestra/rl_state.hpp"
#include "test_helpers.hpp"

namespace {

std::string toy_config(std::int64_t updates) {
  return R"(name: toy
environment: toy
toy_step_ms: 3
a3c:
  agents: 2
  hidden: [16]
  n_steps: 4
  total_updates: )" + std::to_string(updates) + R"(
  log_every: 10
  checkpoint_every: 50
  agent_silence_s: 1
  reply_timeout_s: 5
  idle_timeout_s: 20
  poll_interval_ms: 20
)";
}

// The trainer as a child whose pid we know (to kill it), output to `log`.
pid_t start(const std::string& args, const std::string& log) {
  const std::string command = "exec " + std::string(ORCHESTRA_BINARY) + " " + args + " > " + log + " 2>&1";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// Exit status, or -1 after `seconds` (the child is then killed).
int wait_for(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// Polls until `ready` or the deadline; returns whether it became ready.
template <typename F>
bool eventually(F ready, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::int64_t last_update(const std::string& csv_path) {
  const std::string csv = testing::read_text(csv_path);
  const auto end = csv.find_last_not_of('\n');
  if (end == std::string::npos) return 0;
  const auto start_of_line = csv.rfind('\n', end);
  if (start_of_line == std::string::npos) return 0;
  const std::string line = csv.substr(start_of_line + 1);
  return line.empty() || !std::isdigit(static_cast<unsigned char>(line[0])) ? 0 : std::stoll(line);
}

}  // namespace

TEST_CASE("a killed agent process does not stop training, the server notices and goes on") {
  testing::TempDir dir;
  testing::write_text(dir / "toy.yaml", toy_config(400));
  const pid_t trainer = start("train " + (dir / "toy.yaml") + " --out " + (dir / "out"), dir / "log");
  std::smatch m;
  std::string log;
  REQUIRE(eventually([&] {
    log = testing::read_text(dir / "log");
    return std::regex_search(log, m, std::regex("agent process 0: pid ([0-9]+)"));
  }, 30));
  const pid_t victim = static_cast<pid_t>(std::stol(m[1]));
  REQUIRE(eventually([&] { return last_update(dir / "out/train.csv") >= 40; }, 60));
  REQUIRE(::kill(victim, SIGKILL) == 0);
  CHECK(wait_for(trainer, 120) == 0);
  log = testing::read_text(dir / "log");
  INFO(log);
  CHECK(log.find("killed by signal 9") != std::string::npos);
  CHECK(log.find("silent for") != std::string::npos);
  CHECK(log.find("trained 400 updates") != std::string::npos);
  CHECK(last_update(dir / "out/train.csv") == 400);
  CHECK(std::filesystem::exists(dir / "out/policy.pt"));
}

TEST_CASE("--resume after a killed trainer continues from the checkpoint's update counter") {
  testing::TempDir dir;
  testing::write_text(dir / "toy.yaml", toy_config(1000000));
  const pid_t trainer = start("train " + (dir / "toy.yaml") + " --out " + (dir / "out"), dir / "log1");
  REQUIRE(eventually([&] { return last_update(dir / "out/train.csv") >= 120; }, 60));
  ::kill(trainer, SIGKILL);
  CHECK(wait_for(trainer, 10) == 128 + SIGKILL);
  const std::int64_t killed_at = last_update(dir / "out/train.csv");

  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " train " + (dir / "toy.yaml") + " --out " +
                                      (dir / "out") + " --resume --updates " + std::to_string(killed_at + 60));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex("resuming from .*checkpoint.pt at update ([0-9]+)")));
  const std::int64_t resumed_at = std::stoll(m[1]);
  CHECK(resumed_at >= 100);
  CHECK(resumed_at % 50 == 0);  // a checkpoint_every boundary: the last checkpoint before the kill
  CHECK(resumed_at <= killed_at);
  CHECK(r.output.find("trained " + std::to_string(killed_at + 60) + " updates") != std::string::npos);
  // train.csv: the rows after the checkpoint were redone, not duplicated.
  const std::string csv = testing::read_text(dir / "out/train.csv");
  CHECK(csv.find("\n" + std::to_string(resumed_at + 10) + ",") == csv.rfind("\n" + std::to_string(resumed_at + 10) + ","));
  CHECK(last_update(dir / "out/train.csv") == killed_at + 60);
  CHECK(agents::A3cPolicy::load(dir / "out/policy.pt").updates() == killed_at + 60);
}

TEST_CASE("train, serve, agent and keygen reject bad input with one line") {
  testing::TempDir dir;
  const std::string bin = ORCHESTRA_BINARY;
  testing::write_text(dir / "bad.yaml", "environment: toy\na3c:\n  gamma: 2\n");
  auto r = testing::run_command(bin + " train " + (dir / "bad.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("bad.yaml:3: a3c.gamma: expected a number >= 0 and <= 1, got 2") != std::string::npos);
  testing::write_text(dir / "start.yaml", "environment: toy\nexploring_start: [4, 2]\n");
  r = testing::run_command(bin + " train " + (dir / "start.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("start.yaml:2: exploring_start: expected [lo, hi] with lo <= hi") != std::string::npos);
  testing::write_text(dir / "exp.yaml", "environment: local-sgd\n");
  r = testing::run_command(bin + " train " + (dir / "exp.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("experiments: environment local-sgd needs at least one experiment config") != std::string::npos);
  testing::write_text(dir / "toy.yaml", toy_config(10));
  r = testing::run_command(bin + " serve " + (dir / "toy.yaml") + " --bind tcp://0.0.0.0:0");
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("needs CURVE keys") != std::string::npos);
  // An address it cannot listen on (a port this test holds) is named, and leaves no train.csv
  // behind to look resumable.
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(holder, 1) == 0);
  REQUIRE(::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  const std::string taken = "tcp://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  r = testing::run_command(bin + " serve " + (dir / "toy.yaml") + " --bind " + taken + " --out " + (dir / "unbound"));
  ::close(holder);
  CHECK(r.exit_code == 1);
  CHECK(r.output == "orchestra: communication error: " + taken + ": cannot listen here (Address already in use)\n");
  CHECK_FALSE(std::filesystem::exists(dir / "unbound/train.csv"));
  // A port libzmq would wrap (99999 is 34463 to it), or one that is not a number: refused as given.
  for (const std::string& command : {" serve " + (dir / "toy.yaml") + " --bind tcp://127.0.0.1:99999",
                                    " agent " + (dir / "toy.yaml") + " --connect tcp://127.0.0.1:notaport"}) {
    r = testing::run_command(bin + command);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("with a port from 0 to 65535") != std::string::npos);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  // What libzmq answered with "Invalid argument" (exit 1), or "No such device" for localhost: one
  // line naming the flag, exit 2.
  for (const auto& [command, says] : std::vector<std::pair<std::string, std::string>>{
           {" agent " + (dir / "toy.yaml") + " --connect garbage", "--connect garbage: expected tcp://HOST:PORT, ipc://PATH or inproc://NAME"},
           {" agent " + (dir / "toy.yaml") + " --connect udp://127.0.0.1:5555", "--connect udp://127.0.0.1:5555: expected tcp://HOST:PORT"},
           {" agent " + (dir / "toy.yaml") + " --connect tcp://*:5555", "not to * (that is for --bind)"},
           {" serve " + (dir / "toy.yaml") + " --bind garbage", "--bind garbage: expected tcp://HOST:PORT"},
           {" serve " + (dir / "toy.yaml") + " --bind tcp://localhost:5555", "bind to an address: tcp://127.0.0.1:5555"}}) {
    CAPTURE(command);
    r = testing::run_command(bin + command);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(says) != std::string::npos);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  r = testing::run_command(bin + " agent " + (dir / "toy.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--connect") != std::string::npos);
  r = testing::run_command(bin + " keygen " + (dir / "keys"));
  CHECK(r.exit_code == 0);
  CHECK((std::filesystem::status(dir / "keys").permissions() & std::filesystem::perms::group_read) == std::filesystem::perms::none);
  // New keys over the ones a server and its agents use would lock them out: refused, kept.
  const std::string keys = testing::read_text(dir / "keys");
  r = testing::run_command(bin + " keygen " + (dir / "keys"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(dir / "keys" + " exists: a server and its agents may be using these keys") != std::string::npos);
  CHECK(testing::read_text(dir / "keys") == keys);
  r = testing::run_command(bin + " serve " + (dir / "toy.yaml") + " --keys " + dir.path.string());
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(dir.path.string() + ": is a directory, not a key file") != std::string::npos);

  // a3c.init_policy: a network of another shape is named with both shapes, before anything runs.
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{8, {4}})).save(dir / "narrow.pt");
  testing::write_text(dir / "init.yaml", toy_config(10) + "  init_policy: " + (dir / "narrow.pt") + "\n");
  r = testing::run_command(bin + " train " + (dir / "init.yaml") + " --out " + (dir / "init"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("init.yaml:15: a3c.init_policy: " + (dir / "narrow.pt") +
                      " is a network of 8 observations, hidden [4] and 3 actions; this training's is 8 observations, hidden [16] and 3 actions") != std::string::npos);
}

TEST_CASE("orchestra train with a3c.init_policy fine-tunes that policy and records where it started, and lr_decay") {
  testing::TempDir dir;
  const std::string bin = ORCHESTRA_BINARY;
  testing::write_text(dir / "first.yaml", toy_config(10));
  auto r = testing::run_command(bin + " train " + (dir / "first.yaml") + " --out " + (dir / "first") + " --quiet");
  REQUIRE(r.exit_code == 0);
  const std::string start = (dir / "first/policy.pt");
  CHECK(agents::A3cPolicy::load(start).training().count("lr_decay") == 0);
  testing::write_text(dir / "tune.yaml", toy_config(10) + "  seed: 5\n  lr_decay: linear\n  init_policy: " + start + "\n");
  r = testing::run_command(bin + " train " + (dir / "tune.yaml") + " --out " + (dir / "tune"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("fine-tuning " + start) != std::string::npos);
  agents::A3cPolicy tuned = agents::A3cPolicy::load(dir / "tune/policy.pt");
  CHECK(tuned.training().at("init_policy") == start);
  CHECK(tuned.training().at("lr_decay") == "linear");
  CHECK(tuned.updates() == 10);
  CHECK(agents::flat_parameters(tuned.network()) != agents::flat_parameters(agents::A3cPolicy::load(start).network()));
}

TEST_CASE("orchestra-a3c deploys a policy file in orchestra run, a wrong file is a config error") {
  testing::TempDir dir;
  torch::manual_seed(2);
  // Trained with T moving 7.5 ms per action, decided every 2 rounds: deployed so unless the config
  // names another unit or interval.
  agents::PolicyControl control;
  control.unit_ms = 7.5;
  control.interval = orchestra::DecisionInterval::Rounds;
  control.interval_rounds = 2;
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}}), 0, control).save(dir / "p.pt");
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{8, {8}})).save(dir / "toy.pt");
  // One trained on the state with the progress entries (25): deployed with that state.
  agents::PolicyControl progress = control;
  progress.state_features = orchestra::StateFeatures::Progress;
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kProgressStateSize, {8}}), 0, progress)
      .save(dir / "p25.pt");
  // One with moves of two sizes (x2 and x4): deployed with them; its 5 outputs fix max_move.
  agents::PolicyControl two_sizes;
  two_sizes.move = orchestra::BarrierMove::Multiplicative;
  two_sizes.max_move = 2;
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}, 5}), 0, two_sizes).save(dir / "p5.pt");
  const std::string experiment = R"(name: deploy
seed: 5
data:
  dataset: synthetic
  synthetic: {train: 512, test: 128, side: 6}
model: {arch: mlp, hidden: [16]}
training: {global_batch: 32, epochs: 3, target_accuracy: 0.5}
cluster:
  servers:
    - name: s0
      workers:
        - {name: fast, time_model: {coefficients: [1, 0.1]}, max_batch: 64, noise: 0.05}
        - {name: slow, time_model: {coefficients: [3, 0.4]}, max_batch: 64, noise: 0.05}
policies:
  - orchestra-lcm
  - {name: orchestra-a3c, policy: POLICY}
  - {name: orchestra-random, seed: 3}
)";
  // Writes NAME.yaml with POLICY replaced by `policy` (paths relative to the config's folder) and
  // runs it into NAME/.
  const auto run_with = [&](const std::string& name, const std::string& policy) {
    std::string yaml = experiment;
    yaml.replace(yaml.find("POLICY"), 6, policy);
    testing::write_text(dir / (name + ".yaml"), yaml);
    return testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / (name + ".yaml")) + " --quiet --out " +
                                (dir / name));
  };
  auto r = run_with("deploy", "p.pt");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "deploy/orchestra-a3c"));
  CHECK(std::filesystem::exists(dir / "deploy/orchestra-random"));
  const std::string deployed = testing::read_text(dir / "deploy/orchestra-a3c/config.json");
  CHECK(deployed.find("\"unit_ms\": 7.5") != std::string::npos);
  CHECK(deployed.find("\"interval_rounds\": 2") != std::string::npos);
  r = run_with("unit", "p.pt, unit_ms: 3, interval: epoch");
  CHECK(r.exit_code == 0);
  const std::string overridden = testing::read_text(dir / "unit/orchestra-a3c/config.json");
  CHECK(overridden.find("\"unit_ms\": 3") != std::string::npos);
  CHECK(overridden.find("\"interval\": \"epoch\"") != std::string::npos);
  // A move the policy was not trained with needs its own key: a factor on an additive policy is an error.
  r = run_with("factor", "p.pt, factor: 2");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("policies[1].factor: only a multiplicative move has a factor") != std::string::npos);
  r = run_with("wrong", "toy.pt");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("wrong.yaml:16: policies[1].policy:") != std::string::npos);
  CHECK(r.output.find("trained on observations of 8 entries") != std::string::npos);
  r = run_with("progress", "p25.pt");
  CHECK(r.exit_code == 0);
  CHECK(testing::read_text(dir / "progress/orchestra-a3c/config.json").find("\"state\": \"progress\"") != std::string::npos);
  r = run_with("base", "p25.pt, state: base");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("base.yaml:16: policies[1].state:") != std::string::npos);
  CHECK(r.output.find("trained on observations of 25 entries; the barrier controller's state (base) has 22") != std::string::npos);
  r = run_with("moves", "p5.pt");
  CHECK(r.exit_code == 0);
  CHECK(testing::read_text(dir / "moves/orchestra-a3c/config.json").find("\"max_move\": 2") != std::string::npos);
  r = run_with("narrow", "p5.pt, max_move: 1");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("narrow.yaml:16: policies[1].max_move: " + (dir / "p5.pt") + " has 5 actions (moves up to 2)") != std::string::npos);
  r = run_with("seed", "p.pt, seed: 3");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("policies[1].seed: only sampled actions use a seed") != std::string::npos);
}

TEST_CASE("orchestra-a3c after the target: hold keeps T (the default), continue moves it, sampled actions are seeded") {
  testing::TempDir dir;
  torch::manual_seed(4);
  agents::PolicyControl control;
  control.move = orchestra::BarrierMove::Multiplicative;
  control.factor = 1.5;
  control.interval = orchestra::DecisionInterval::Rounds;
  control.interval_rounds = 1;
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}}), 0, control).save(dir / "p.pt");
  const std::string experiment = R"(name: after
seed: 5
data:
  dataset: synthetic
  synthetic: {train: 512, test: 128, side: 6}
model: {arch: mlp, hidden: [16]}
training: {global_batch: 32, epochs: 3, target_accuracy: 0.99, eval_every_rounds: 1}
cluster:
  workers:
    - {name: fast, time_model: {coefficients: [1, 0.1]}, max_batch: 64, noise: 0.05}
    - {name: slow, time_model: {coefficients: [3, 0.4]}, max_batch: 64, noise: 0.05}
policies:
  - {name: orchestra-a3c, policy: p.pt, actions: sampled, seed: 9}
  - {name: orchestra-a3c, label: continue, policy: p.pt, actions: sampled, seed: 9, after_target: continue}
  - {name: orchestra-a3c, label: greedy, policy: p.pt}
  - {name: orchestra-a3c, label: early, policy: p.pt, actions: sampled, seed: 9, hold_x_target: 0.5}
)";
  testing::write_text(dir / "after.yaml", experiment);
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "after.yaml") + " --quiet --out " + (dir / "a"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // The first evaluation at the target, and T in every round from then on (one row per worker).
  const std::filesystem::path out = dir / "a";
  const auto after_target = [&](const std::string& label, double hold_at = 0.99) {
    const auto rounds_done = testing::csv_column(out / label / "evals.csv", "round");
    const auto accuracy = testing::csv_column(out / label / "evals.csv", "accuracy");
    const auto reached = std::find_if(accuracy.begin(), accuracy.end(), [&](double a) { return a >= hold_at; }) - accuracy.begin();
    REQUIRE(reached < static_cast<long>(accuracy.size()));
    const auto round = testing::csv_column(out / label / "rounds.csv", "round");
    const auto barrier = testing::csv_column(out / label / "rounds.csv", "barrier_ms");
    std::set<double> before, after;
    for (std::size_t i = 0; i < round.size(); ++i) (round[i] < rounds_done[reached] ? before : after).insert(barrier[i]);
    REQUIRE(after.size() >= 1);
    return std::make_pair(before, after);
  };
  const auto [hold_before, hold_after] = after_target("orchestra-a3c");
  const auto [continue_before, continue_after] = after_target("continue");
  CHECK(hold_before.size() > 1);     // the agent moved T before the target ...
  CHECK(hold_after.size() == 1);     // ... and not after it
  CHECK(continue_after.size() > 1);  // with `continue` it keeps moving
  CHECK(hold_before == continue_before);  // the same seed draws the same moves up to the target
  // hold_x_target: 0.5 holds from an evaluation at half the target on, with the same moves before it.
  const auto [early_before, early_after] = after_target("early", 0.495);
  CHECK(early_after.size() == 1);
  CHECK(early_before.size() < hold_before.size());
  CHECK(std::includes(hold_before.begin(), hold_before.end(), early_before.begin(), early_before.end()));
  // Sampled moves are not the greedy ones, and the same seed gives the same file.
  CHECK(testing::read_text(dir / "a/greedy/rounds.csv") != testing::read_text(dir / "a/orchestra-a3c/rounds.csv"));
  const auto again = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "after.yaml") + " --quiet --out " + (dir / "b"));
  REQUIRE(again.exit_code == 0);
  CHECK(testing::read_text(dir / "b/orchestra-a3c/rounds.csv") == testing::read_text(dir / "a/orchestra-a3c/rounds.csv"));
  CHECK(testing::read_text(dir / "a/orchestra-a3c/config.json").find("\"after_target\": \"hold\"") != std::string::npos);
  CHECK(testing::read_text(dir / "a/early/config.json").find("\"hold_x_target\": 0.5") != std::string::npos);
  // A fraction out of (0, 1], or one without holding: file:line: key.
  for (const auto& [entry, message] : std::vector<std::pair<std::string, std::string>>{
           {"{name: orchestra-a3c, policy: p.pt, hold_x_target: 1.5}", "policies[0].hold_x_target"},
           {"{name: orchestra-a3c, policy: p.pt, after_target: continue, hold_x_target: 0.9}", "hold_x_target: needs after_target: hold"}}) {
    std::string bad = experiment.substr(0, experiment.find("policies:")) + "policies:\n  - " + entry + "\n";
    testing::write_text(dir / "bad.yaml", bad);
    const auto refused = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "bad.yaml") + " --quiet --out " + (dir / "bad"));
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find("bad.yaml:") != std::string::npos);
    CHECK(refused.output.find(message) != std::string::npos);
  }
}

TEST_CASE("orchestra train with envs_per_agent > 1 on the local-sgd environment writes a policy that orchestra-a3c deploys") {
  testing::TempDir dir;
  const std::string bin = ORCHESTRA_BINARY;
  testing::write_text(dir / "cluster.yaml", R"(name: cluster
seed: 5
data:
  dataset: synthetic
  synthetic: {train: 256, test: 64, side: 6}
model: {arch: mlp, hidden: [8]}
training: {global_batch: 32, epochs: 2, target_accuracy: 0.5}
cluster:
  workers:
    - {name: fast, time_model: {coefficients: [1, 0.1]}, max_batch: 64, noise: 0.05}
    - {name: slow, time_model: {coefficients: [3, 0.4]}, max_batch: 64, noise: 0.05}
policies:
  - {name: orchestra-a3c, policy: out/policy.pt}
)");
  testing::write_text(dir / "train.yaml", R"(name: vector
environment: local-sgd
experiments: [cluster.yaml]
controller: {move: multiplicative, factor: 2, interval: rounds, interval_rounds: 2}
reward: time
a3c:
  agents: 1
  envs_per_agent: 3
  hidden: [8]
  n_steps: 1000
  gamma: 1.0
  total_updates: 3
  log_every: 1
  reply_timeout_s: 60
  poll_interval_ms: 20
)");
  auto r = testing::run_command(bin + " train " + (dir / "train.yaml") + " --out " + (dir / "out"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  agents::A3cPolicy policy = agents::A3cPolicy::load(dir / "out/policy.pt");
  CHECK(policy.updates() == 3);
  CHECK(policy.observation_size() == orchestra::StateLayout::kStateSize);
  CHECK(policy.training().at("envs_per_agent") == "3");
  CHECK(policy.control().move == orchestra::BarrierMove::Multiplicative);
  // Each update carried at least 3 episodes (one rollout of each environment).
  const auto episodes = testing::csv_column(dir / "out/train.csv", "episodes");
  REQUIRE(episodes.size() == 3);
  CHECK(episodes.back() >= 9);
  r = testing::run_command(bin + " run " + (dir / "cluster.yaml") + " --quiet --out " + (dir / "deployed"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "deployed/orchestra-a3c/summary.json"));
  CHECK(testing::read_text(dir / "deployed/orchestra-a3c/config.json").find("\"interval_rounds\": 2") != std::string::npos);
  // The same training with the three episodes' training merged into one computation (what fills a GPU).
  const std::string merged_config = testing::read_text(dir / "train.yaml");
  testing::write_text(dir / "merged.yaml", merged_config.substr(0, merged_config.find("a3c:")) + "merge_episodes: true\n" +
                                               merged_config.substr(merged_config.find("a3c:")));
  r = testing::run_command(bin + " train " + (dir / "merged.yaml") + " --out " + (dir / "merged"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(agents::A3cPolicy::load(dir / "merged/policy.pt").training().at("merge_episodes") == "true");
  const auto merged_episodes = testing::csv_column(dir / "merged/train.csv", "episodes");
  REQUIRE(merged_episodes.size() == 3);
  CHECK(merged_episodes.back() >= 9);
}

TEST_CASE("orchestra train: a bad a3c.envs_per_agent is one line naming file:line and the key, --help lists the learners") {
  testing::TempDir dir;
  const std::string bin = ORCHESTRA_BINARY;
  testing::write_text(dir / "zero.yaml", toy_config(10) + "  envs_per_agent: 0\n");
  auto r = testing::run_command(bin + " train " + (dir / "zero.yaml") + " --out " + (dir / "zero"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("zero.yaml:15: a3c.envs_per_agent: expected a positive integer, got 0") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "zero"));
  testing::write_text(dir / "text.yaml", toy_config(10) + "  envs_per_agent: [4]\n");
  r = testing::run_command(bin + " train " + (dir / "text.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("text.yaml:15: a3c.envs_per_agent: expected a positive integer") != std::string::npos);
  r = testing::run_command(bin + " train --help");
  CHECK(r.exit_code == 0);
  for (const auto& kind : agents::learner_registry()) CHECK(r.output.find(std::string("  ") + kind.name + " ") != std::string::npos);
  // Two agents of 4 toy environments each, as processes: a push carries 4 rollouts of up to 4 steps
  // (a 10-step toy episode ends every third), so 30 updates report at least 4 (30 / 3 - 2) episodes.
  testing::write_text(dir / "four.yaml", toy_config(30) + "  envs_per_agent: 4\n");
  r = testing::run_command(bin + " train " + (dir / "four.yaml") + " --out " + (dir / "four") + " --quiet");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("trained 30 updates") != std::string::npos);
  CHECK(last_update(dir / "four/train.csv") == 30);
  CHECK(testing::csv_column(dir / "four/train.csv", "episodes").back() >= 32);
}

TEST_CASE("Ctrl-C or SIGTERM stops train and serve with the checkpoint of that update, and --resume continues there") {
  testing::TempDir dir;
  testing::write_text(dir / "toy.yaml", toy_config(1000000));  // checkpoint_every 50
  const pid_t trainer = start("train " + (dir / "toy.yaml") + " --out " + (dir / "out"), dir / "log1");
  REQUIRE(eventually([&] { return last_update(dir / "out/train.csv") >= 70; }, 60));
  REQUIRE(::kill(trainer, SIGINT) == 0);
  CHECK(wait_for(trainer, 60) == 128 + SIGINT);
  const std::string log = testing::read_text(dir / "log1");
  INFO(log);
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("orchestra train: interrupted by SIGINT at update ([0-9]+); checkpoint written, continue with --resume")));
  const std::int64_t stopped_at = std::stoll(m[1]);
  CHECK(stopped_at >= 70);  // not the last checkpoint_every boundary (50): the update it stopped at
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " train " + (dir / "toy.yaml") + " --out " +
                                      (dir / "out") + " --resume --updates " + std::to_string(stopped_at + 20));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("at update " + std::to_string(stopped_at)) != std::string::npos);

  // serve with no agent: SIGTERM (a scheduler's preemption) writes the checkpoint of update 0.
  const pid_t server = start("serve " + (dir / "toy.yaml") + " --bind tcp://127.0.0.1:0 --out " + (dir / "served"), dir / "log2");
  REQUIRE(eventually([&] { return testing::read_text(dir / "log2").find("serving") != std::string::npos; }, 30));
  REQUIRE(::kill(server, SIGTERM) == 0);
  CHECK(wait_for(server, 60) == 128 + SIGTERM);
  INFO(testing::read_text(dir / "log2"));
  CHECK(testing::read_text(dir / "log2").find("orchestra serve: interrupted by SIGTERM at update 0") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "served/checkpoint.pt"));
}
