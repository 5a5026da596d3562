// Progress on every long command: the reporter itself on a fake clock (plain lines at most and at
// least every line_every, a redrawn line on a terminal, nothing when quiet), then the commands as
// a user pipes them (`orchestra train | cat`, `run`, `run --seeds --jobs`, `launch`), their lines
// parsed for their fields, with ORCHESTRA_PROGRESS_EVERY_S making the interval short.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "experiments/runner/progress_reporter.hpp"
#include "test_helpers.hpp"

using experiments::ProgressReporter;
using experiments::ProgressStyle;
using experiments::ProgressTiming;
using namespace std::chrono_literals;

namespace {

// A reporter writing into memory, on a clock the test moves.
struct Harness {
  char* buffer = nullptr;
  std::size_t size = 0;
  FILE* stream = ::open_memstream(&buffer, &size);
  ProgressReporter::Clock::time_point now{};
  std::optional<ProgressReporter> holder;
  ProgressReporter& reporter;
  Harness(ProgressStyle style, ProgressTiming timing)
      : holder(std::in_place, style, stream, timing, [this] { return now; }), reporter(*holder) {}
  ~Harness() {
    holder.reset();  // it may still write (a pending log line, clearing a redrawn line)
    std::fclose(stream);
    std::free(buffer);
  }
  std::string text() {
    std::fflush(stream);
    return std::string(buffer, size);
  }
  // What was printed since the last call.
  std::string taken;
  std::string take() {
    const std::string all = text();
    const std::string fresh = all.substr(taken.size());
    taken = all;
    return fresh;
  }
};

ProgressTiming every(std::chrono::milliseconds ms) {
  ProgressTiming t;
  t.line_every = ms;
  return t;
}

// A line of output and when it was read.
struct TimedLine {
  double at_s;
  std::string text;
};

// Runs `command` (stdout and stderr into one pipe, as `2>&1 | cat` would) and timestamps each line.
std::vector<TimedLine> timed_lines(const std::string& command, int& exit_code) {
  std::vector<TimedLine> lines;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) {
    std::string line = buf;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    lines.push_back({std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), line});
  }
  const int status = ::pclose(pipe);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return lines;
}

std::string joined(const std::vector<TimedLine>& lines) {
  std::string all;
  for (const auto& l : lines) all += l.text + "\n";
  return all;
}

std::string orchestra_binary() { return ORCHESTRA_BINARY; }

// A TCP port nothing listens on now: the OS picks one for a socket bound to port 0.
int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  REQUIRE(bound);
  return ntohs(address.sin_port);
}

// The A3C toy environment, slow enough that updates are seconds apart: one agent, two 700 ms steps
// per rollout. Only the heartbeat can then print lines more often than updates happen.
std::string slow_toy_config(int updates, double step_ms) {
  return "name: toy\nenvironment: toy\ntoy_step_ms: " + std::to_string(step_ms) +
         "\na3c:\n  agents: 1\n  hidden: [8]\n  n_steps: 2\n  total_updates: " + std::to_string(updates) +
         "\n  log_every: 1\n  checkpoint_every: 100\n  stats_window: 5\n  agent_silence_s: 30\n  reply_timeout_s: 30\n"
         "  idle_timeout_s: 60\n  poll_interval_ms: 20\n";
}

const char* kTinyRun = R"(name: tiny
seed: 3
data:
  dataset: synthetic
  synthetic: {train: 512, test: 128, side: 6}
model: {arch: mlp, hidden: [16]}
training:
  global_batch: 32
  epochs: 2
  target_accuracy: 0.5
cluster:
  workers:
    - {name: fast, time_model: {coefficients: [1, 0.1]}, max_batch: 64}
    - {name: slow, time_model: {coefficients: [3, 0.4]}, max_batch: 64}
policies:
  - dsgd
  - {name: local-sgd, H: 3}
)";

}  // namespace

TEST_CASE("progress: plain lines at most and at least every line_every, each with done/total, fields, rate, elapsed and ETA") {
  Harness h(ProgressStyle::Lines, every(5000ms));
  h.reporter.start("train", "updates", 100);
  h.reporter.update(0, {{"episodes", "0"}});
  CHECK(h.take() == "train  0/100 updates (0%)  episodes 0  0.00 updates/s  elapsed 0:00  ETA -\n");  // the first, at once
  h.now += 1s;
  h.reporter.update(10, {{"episodes", "4"}});
  CHECK(h.take().empty());  // not due
  h.now += 4s;
  h.reporter.update(50, {{"episodes", "20"}, {"mean return", "-5.21"}});
  CHECK(h.take() == "train  50/100 updates (50%)  episodes 20  mean return -5.21  10 updates/s  elapsed 0:05  ETA 0:05\n");
  h.now += 1s;
  h.reporter.message("[server] agent 1 left");
  CHECK(h.take() == "[server] agent 1 left\n");
  h.now += 4s;  // 4 s after the message: a line was printed, so the next is not yet due
  h.reporter.update(60);
  CHECK(h.take().empty());
  h.now += 1s;
  h.reporter.update(60);
  CHECK(h.take() == "train  60/100 updates (60%)  5.5 updates/s  elapsed 0:11  ETA 0:07\n");
  h.now += 5s;  // nothing new since the last line, but a log must not go silent
  h.reporter.update(60);
  CHECK(h.take() == "train  60/100 updates (60%)  3.8 updates/s  elapsed 0:16  ETA 0:11\n");
  h.now += 1s;
  h.reporter.update(100);
  h.reporter.finish();
  CHECK(h.take() == "train  100/100 updates (100%)  5.9 updates/s  elapsed 0:17  ETA 0:00\n");
  // A final update printed as it came is not printed again by finish().
  h.reporter.start("evaluate", "clusters", 2);
  h.reporter.update(0);
  h.take();
  h.now += 6s;
  h.reporter.update(2);
  h.reporter.finish();
  CHECK(h.take() == "evaluate  2/2 clusters (100%)  0.33 clusters/s  elapsed 0:06  ETA 0:00\n");
}

TEST_CASE("progress: a resumed task's rate counts only its own work, and fractional and unknown totals read right") {
  Harness h(ProgressStyle::Lines, every(1000ms));
  h.reporter.start("train", "updates", 1000, 400);  // resumed at update 400
  h.now += 10s;
  h.reporter.update(420);
  CHECK(h.take() == "train  420/1000 updates (42%)  2.0 updates/s  elapsed 0:10  ETA 4:50\n");
  h.reporter.start("dsgd", "epochs", 4, 0, false);
  h.now += 2s;
  h.reporter.update(1.5, {{"sim time", "12.3 s"}});
  CHECK(h.take() == "dsgd  1.50/4 epochs (37%)  sim time 12.3 s  elapsed 0:02  ETA 0:03\n");
  h.reporter.start("search", "candidates", 0);
  h.now += 3600s;
  h.reporter.update(7);
  CHECK(h.take() == "search  7 candidates  0.00 candidates/s  elapsed 1:00:00\n");
}

TEST_CASE("progress: on a terminal one line is redrawn in place, at most every redraw_every, and messages clear it") {
  ProgressTiming timing;
  timing.redraw_every = 100ms;
  Harness h(ProgressStyle::Redrawn, timing);
  h.reporter.start("dsgd", "epochs", 4, 0, false);
  h.reporter.update(1);
  CHECK(h.take() == "\r\033[2Kdsgd [#####...............]  1/4 epochs (25%)  elapsed 0:00  ETA -");
  h.now += 50ms;
  h.reporter.update(2);
  CHECK(h.take().empty());  // throttled
  h.now += 60ms;
  h.reporter.update(2);
  CHECK(h.take().rfind("\r\033[2Kdsgd [##########..........]  2/4 epochs (50%)", 0) == 0);
  h.reporter.message("dsgd           epoch 2/4  acc 0.8");
  CHECK(h.take() == "\r\033[2Kdsgd           epoch 2/4  acc 0.8\n");  // the line cleared, then the message
  h.reporter.update(2);  // drawn again at once, under the message
  CHECK(h.take().rfind("\r\033[2Kdsgd [", 0) == 0);
  h.reporter.finish();
  CHECK(h.take().rfind("\r\033[2Kdsgd  2/4 epochs (50%)", 0) == 0);  // the last state as a line of its own
  CHECK(h.text().back() == '\n');

  // Too long for the terminal (120 columns when it does not say): the last fields give way, the
  // ETA stays.
  h.reporter.start("dsgd", "epochs", 4, 0, false);
  h.reporter.update(1, {{"a", std::string(40, 'x')}, {"b", std::string(60, 'y')}});
  const std::string shown = h.take();
  CHECK(shown == "\r\033[2Kdsgd [#####...............]  1/4 epochs (25%)  a " + std::string(40, 'x') + "  elapsed 0:00  ETA -");
}

TEST_CASE("progress: --quiet prints nothing, and a log stream's lines become messages") {
  Harness quiet(ProgressStyle::Quiet, every(1ms));
  quiet.reporter.start("train", "updates", 10);
  quiet.reporter.update(5);
  quiet.reporter.message("agent 0 joined");
  quiet.reporter.finish();
  CHECK(quiet.text().empty());

  Harness h(ProgressStyle::Lines, every(1000ms));
  h.reporter.log_stream() << "[server] agent 0 joined" << std::endl << "[server] half a line";
  CHECK(h.take() == "[server] agent 0 joined\n");
}

TEST_CASE("progress: ORCHESTRA_PROGRESS_EVERY_S sets the plain lines' interval (default 5 s), and a bad value is one clear error") {
  ::unsetenv("ORCHESTRA_PROGRESS_EVERY_S");
  CHECK(ProgressTiming::from_environment().line_every == 5000ms);  // "orchestra train | cat": a line at least every 10 s
  ::setenv("ORCHESTRA_PROGRESS_EVERY_S", "0.25", 1);
  CHECK(ProgressTiming::from_environment().line_every == 250ms);
  for (const char* bad : {"0", "-1", "fast", "1e9", "2s"}) {
    ::setenv("ORCHESTRA_PROGRESS_EVERY_S", bad, 1);
    CHECK_THROWS_WITH_AS(ProgressTiming::from_environment(), doctest::Contains("ORCHESTRA_PROGRESS_EVERY_S"), common::UsageError);
  }
  ::unsetenv("ORCHESTRA_PROGRESS_EVERY_S");
  CHECK(experiments::format_duration(0) == "0:00");
  CHECK(experiments::format_duration(59.6) == "1:00");
  CHECK(experiments::format_duration(3725) == "1:02:05");
}

TEST_CASE("orchestra train | cat: a progress line every interval, even while no update happens, with every field") {
  testing::TempDir dir;
  testing::write_text(dir / "toy.yaml", slow_toy_config(4, 700));
  int exit_code = -1;
  const auto lines = timed_lines("ORCHESTRA_PROGRESS_EVERY_S=0.25 " + orchestra_binary() + " train " + (dir / "toy.yaml") + " --out " + (dir / "out"),
                                 exit_code);
  INFO(joined(lines));
  REQUIRE(exit_code == 0);
  const std::regex progress(
      R"(^train  (\d+)/4 updates \((\d+)%\)  episodes (\d+)  mean return (\S+)  time to target (.+ reached\))  ([0-9.]+) updates/s  elapsed \d+:\d\d  ETA (\S+)$)");
  std::vector<TimedLine> seen;
  long last_updates = -1;
  for (const auto& l : lines) {
    std::smatch m;
    if (!std::regex_match(l.text, m, progress)) continue;
    CHECK(std::stol(m[1]) >= last_updates);  // never backwards
    last_updates = std::stol(m[1]);
    CHECK(std::stol(m[2]) == last_updates * 100 / 4);
    seen.push_back(l);
  }
  REQUIRE(seen.size() >= 8);  // ~4 s of training at 0.25 s per line, where updates come ~1.4 s apart
  CHECK(last_updates == 4);
  // The heartbeat: never a second without a line, though updates are further apart than that.
  double longest_gap = 0;
  for (std::size_t i = 1; i < seen.size(); ++i) longest_gap = std::max(longest_gap, seen[i].at_s - seen[i - 1].at_s);
  CHECK(longest_gap < 1.2);
  std::smatch m;
  REQUIRE(std::regex_match(seen.back().text, m, progress));
  CHECK(m[7] == "0:00");  // done: nothing left
  CHECK(joined(lines).find("trained 4 updates") != std::string::npos);

  // --quiet: the same training prints no progress line.
  const auto r = testing::run_command("ORCHESTRA_PROGRESS_EVERY_S=0.25 " + orchestra_binary() + " train " + (dir / "toy.yaml") + " --out " +
                                      (dir / "quiet") + " --quiet --updates 2");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find(" updates/s") == std::string::npos);
  CHECK(r.output.find("joined") == std::string::npos);
}

TEST_CASE("orchestra run | cat: each policy's epochs done of its budget, the run's clock and ETA, then one line per epoch") {
  testing::TempDir dir;
  testing::write_text(dir / "t.yaml", kTinyRun);
  int exit_code = -1;
  const auto lines = timed_lines("ORCHESTRA_PROGRESS_EVERY_S=0.05 " + orchestra_binary() + " run " + (dir / "t.yaml") + " --out " + (dir / "out"), exit_code);
  INFO(joined(lines));
  REQUIRE(exit_code == 0);
  const std::regex progress(R"(^(dsgd|local-sgd)  ([0-9.]+)/2 epochs \((\d+)%\)  sim time [0-9.]+ s  elapsed \d+:\d\d  ETA (\S+)$)");
  int dsgd = 0, local = 0;
  for (const auto& l : lines) {
    std::smatch m;
    if (!std::regex_match(l.text, m, progress)) continue;
    CHECK(std::stod(m[2]) <= 2.0);
    (m[1] == "dsgd" ? dsgd : local) += 1;
  }
  CHECK(dsgd >= 1);  // the first line of each policy is printed at once
  CHECK(local >= 1);
  const std::string all = joined(lines);
  CHECK(all.find("dsgd           epoch 2/2  acc ") != std::string::npos);
  const auto r = testing::run_command(orchestra_binary() + " run " + (dir / "t.yaml") + " --out " + (dir / "q") + " --quiet");
  CHECK(r.output.find(" epochs (") == std::string::npos);
  CHECK(r.output.find("epoch 1/2") == std::string::npos);
}

TEST_CASE("orchestra run --seeds --jobs 2 | cat: policies finished over all seeds, seeds done and running, ETA") {
  testing::TempDir dir;
  testing::write_text(dir / "t.yaml", kTinyRun);
  int exit_code = -1;
  const auto lines = timed_lines("ORCHESTRA_PROGRESS_EVERY_S=0.05 " + orchestra_binary() + " run " + (dir / "t.yaml") + " --seeds 1-3 --jobs 2 --out " +
                                     (dir / "out"),
                                 exit_code);
  INFO(joined(lines));
  REQUIRE(exit_code == 0);
  const std::regex progress(R"(^seeds  (\d+)/6 policies \((\d+)%\)  seeds done (\d)/3  running seeds (\S.*?)  elapsed \d+:\d\d  ETA (\S+)$)");
  long last = -1;
  int count = 0;
  for (const auto& l : lines) {
    std::smatch m;
    if (!std::regex_match(l.text, m, progress)) continue;
    CHECK(std::stol(m[1]) >= last);
    CHECK(std::stol(m[1]) >= 2 * std::stol(m[3]));  // a finished seed's policies are all counted
    last = std::stol(m[1]);
    ++count;
  }
  CHECK(count >= 2);
  CHECK(last == 6);  // the final line
  const std::string all = joined(lines);
  for (const char* seed : {"seed 1 done", "seed 2 done", "seed 3 done"}) CHECK(all.find(seed) != std::string::npos);

  // One seed after the other: each policy's lines name the seed, and each seed's end the time left.
  const auto one = timed_lines("ORCHESTRA_PROGRESS_EVERY_S=0.05 " + orchestra_binary() + " run " + (dir / "t.yaml") + " --seeds 4,5 --out " + (dir / "seq"),
                               exit_code);
  const std::string seq = joined(one);
  INFO(seq);
  REQUIRE(exit_code == 0);
  CHECK(std::regex_search(seq, std::regex(R"((^|\n)seed 4 \(1/2\) dsgd  [0-9.]+/2 epochs)")));
  CHECK(std::regex_search(seq, std::regex(R"(\nseed 5 \(2/2\) local-sgd  [0-9.]+/2 epochs)")));
  CHECK(std::regex_search(seq, std::regex(R"(\nseed 4 done \(1/2\)  elapsed \d+:\d\d  ETA \d+:\d\d\n)")));
}

TEST_CASE("orchestra launch | cat: rank 0 reports each policy's epochs as `run` does") {
  testing::TempDir dir;
  std::string yaml = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/real_quick.yaml");
  testing::write_text(dir / "real.yaml", yaml);
  int exit_code = -1;
  const auto lines = timed_lines("ORCHESTRA_PROGRESS_EVERY_S=0.05 " + orchestra_binary() + " launch --nproc 2 " + (dir / "real.yaml") + " --out " +
                                     (dir / "out") + " --timeout 60",
                                 exit_code);
  INFO(joined(lines));
  REQUIRE(exit_code == 0);
  const std::regex progress(R"(^(dsgd|local-sgd|lbb)  ([0-9.]+)/2 epochs \((\d+)%\)  wall time [0-9.]+ s  elapsed \d+:\d\d  ETA (\S+)$)");
  std::set<std::string> policies;
  std::map<std::string, double> done;
  for (const auto& l : lines) {
    std::smatch m;
    if (!std::regex_match(l.text, m, progress)) continue;
    policies.insert(m[1]);
    CHECK_MESSAGE(std::stod(m[2]) >= done[m[1]], l.text);  // never backwards, the end of an epoch included
    done[m[1]] = std::stod(m[2]);
  }
  CHECK(policies == std::set<std::string>{"dsgd", "local-sgd", "lbb"});
  CHECK(std::regex_search(joined(lines), std::regex(R"(\n\S+ reaches 50\.0% first, in [^\n]+\nWhy: )")));  // rank 0's table ends as run's

  // Two machines (here two launchers): the one without rank 0 says how its ranks do. Node 0 starts
  // first and hosts the store on a port the OS reported free; node 1 starts once node 0 says so.
  const std::string port = std::to_string(free_tcp_port());
  const std::string node = orchestra_binary() + " launch --nproc 1 --nnodes 2 --master-addr 127.0.0.1 --master-port " + port + " " +
                           (dir / "real.yaml") + " --timeout 60 --out " + (dir / "two");
  const std::string node0_log = dir / "node0.log";
  const std::string both = "(ORCHESTRA_PROGRESS_EVERY_S=0.05 " + node + " --node-rank 0 > " + node0_log +
                           " 2>&1 & for i in $(seq 200); do grep -q 'starting ranks' " + node0_log +
                           " 2>/dev/null && break; sleep 0.05; done; ORCHESTRA_PROGRESS_EVERY_S=0.05 " + node +
                           " --node-rank 1; node1=$?; wait $!; node0=$?; exit $((node1 | node0)))";
  const auto second = timed_lines(both, exit_code);
  INFO("node 1:\n" << joined(second));
  INFO("node 0:\n" << testing::read_text(node0_log));
  CHECK(exit_code == 0);
  const std::regex node_line(R"(^node 1  ([01])/1 ranks ended \((0|100)%\)  running ([01])  ranks 1  rank 0 on 127\.0\.0\.1  elapsed \d+:\d\d  ETA \S+$)");
  int node_lines = 0;
  std::string last;
  for (const auto& l : second)
    if (std::regex_match(l.text, node_line)) {
      ++node_lines;
      last = l.text;
    }
  CHECK(node_lines >= 2);
  CHECK(last.rfind("node 1  1/1 ranks ended (100%)  running 0  ranks 1", 0) == 0);

  // Two machines given other configs (here node 1's --seed): they trained together without a
  // word, each rank by its own plan. Now every rank stops at the rendezvous, exit 2 on both; the
  // machine that differs names the key.
  const std::string other_port = std::to_string(free_tcp_port());
  const std::string other = orchestra_binary() + " launch --nproc 1 --nnodes 2 --master-addr 127.0.0.1 --master-port " + other_port + " " +
                            (dir / "real.yaml") + " --timeout 60 --quiet --out " + (dir / "mixed");
  const std::string mixed0_log = dir / "mixed0.log";
  const std::string mixed = "(" + other + " --node-rank 0 > " + mixed0_log + " 2>&1 & sleep 0.5; " + other +
                            " --node-rank 1 --seed 3; node1=$?; wait $!; node0=$?; echo \"exits $node0 $node1\")";
  const auto refused = testing::run_command(mixed);
  const std::string node0_said = testing::read_text(mixed0_log);
  INFO("node 1:\n" << refused.output);
  INFO("node 0:\n" << node0_said);
  CHECK(refused.output.find("exits 2 2") != std::string::npos);
  CHECK(refused.output.find("orchestra worker rank 1: rank 1's config is not rank 0's: seed (7, now 3)") != std::string::npos);
  CHECK(node0_said.find("orchestra worker rank 0: rank(s) 1 run another config than rank 0's") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "mixed/dsgd/summary.json"));
}
