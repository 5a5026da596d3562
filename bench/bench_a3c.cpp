// A3C figures for BENCHMARKS.md (issue 5):
//  1. environment steps per second with 1 and 2 agents (agents as threads, one libtorch thread
//     each, on the environment of CONFIG; goal: 2 agents >= 1.6x one);
//  2. the parameter server's round trip (gradient in, Adam step, parameters out) against a bare
//     ZeroMQ DEALER/ROUTER round trip of the same message sizes on tcp loopback (goal: <= 2x);
//  3. one barrier decision (the greedy network on the 92-entry state) as a share of an epoch.
//
// usage: bench_a3c [CONFIG] [--updates N] [--replicas batched|sequential]
//        (default configs/a3c_train.yaml, N = 6 per agent; --replicas overrides every experiment's
//        runtime.replicas, for environment steps/s before and after batched replicas)
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <thread>

#include "agents/agent_worker.hpp"
#include "agents/parameter_server.hpp"
#include "agents/policy_file.hpp"
#include "agents/protocol.hpp"
#include "env/train/compute_threads.hpp"
#include "experiments/runner/train_config.hpp"
#include "orchestra/rl_state.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct StepsResult {
  double steps_per_s = 0;
  double mean_step_s = 0;  // wall time of one environment step (an epoch), per agent
  std::int64_t steps = 0;
};

StepsResult env_steps(const experiments::TrainConfig& config, int agents_count, std::int64_t updates_per_agent) {
  zmq::context_t context;
  agents::ParameterServerOptions s;
  s.a3c = config.a3c;
  s.a3c.total_updates = updates_per_agent * agents_count;
  s.observation_size = config.observation_size;
  s.bind = "inproc://bench-steps";
  agents::ParameterServer server(context, s);
  std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs;
  for (int k = 0; k < agents_count; ++k) envs.push_back(experiments::make_training_env(config, k));  // data loaded here
  const auto start = Clock::now();
  std::vector<std::future<agents::AgentResult>> workers;
  for (int k = 0; k < agents_count; ++k)
    workers.push_back(std::async(std::launch::async, [&, k] {
      agents::AgentWorkerOptions o;
      o.a3c = s.a3c;
      o.connect = server.endpoint();
      return agents::AgentWorker(context, o, *envs[static_cast<std::size_t>(k)]).run();
    }));
  server.serve();
  StepsResult r;
  for (auto& w : workers) r.steps += w.get().env_steps;
  const double wall = seconds_since(start);
  r.steps_per_s = static_cast<double>(r.steps) / wall;
  r.mean_step_s = wall * agents_count / static_cast<double>(r.steps);
  return r;
}

struct RoundTrip {
  double mean_us = 0;
  double median_us = 0;
};

RoundTrip summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size()), us[us.size() / 2]};
}

zmq::message_t receive(zmq::socket_t& s) {
  zmq::message_t m;
  zmq::pollitem_t item{static_cast<void*>(s), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(10000));
  if (!(item.revents & ZMQ_POLLIN) || !s.recv(m, zmq::recv_flags::dontwait)) throw std::runtime_error("bench: no reply in 10 s");
  return m;
}

// Each returns one sample per round trip, in microseconds.
std::vector<double> server_round_trip(const agents::A3cOptions& a3c, int observation_size, int iterations) {
  zmq::context_t context;
  agents::ParameterServerOptions s;
  s.a3c = a3c;
  s.a3c.total_updates = iterations + 1000;
  s.a3c.max_staleness = 1 << 20;
  s.observation_size = observation_size;
  agents::ParameterServer server(context, s);
  std::future<agents::ServeResult> serving = std::async(std::launch::async, [&] { return server.serve(); });
  const auto count = static_cast<std::size_t>(agents::parameter_count(server.network()));
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(server.endpoint());
  const auto hello = agents::encode({agents::MessageType::Hello, 0, 0, static_cast<std::uint64_t>(observation_size), {static_cast<float>(count)}});
  dealer.send(zmq::buffer(hello), zmq::send_flags::none);
  const agents::Decoded welcome = [&] { zmq::message_t m = receive(dealer); return agents::decode(m.data(), m.size(), count); }();
  std::vector<double> us;
  std::uint64_t version = welcome.message.params_version;
  for (int i = 0; i < iterations; ++i) {
    const auto t = Clock::now();
    const auto bytes = agents::encode({agents::MessageType::Gradient, welcome.message.agent_id, version, 0, std::vector<float>(count, 1e-4f)});
    dealer.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::message_t reply = receive(dealer);
    version = agents::decode(reply.data(), reply.size(), count).message.params_version;
    us.push_back(seconds_since(t) * 1e6);
  }
  server.request_stop();
  dealer.send(zmq::buffer(agents::encode({agents::MessageType::Bye, welcome.message.agent_id, version, 0, {}})), zmq::send_flags::none);
  serving.get();
  return us;
}

std::vector<double> bare_round_trip(std::size_t bytes_each_way, int iterations) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::thread echo([&] {
    const std::vector<char> answer(bytes_each_way, 1);
    for (int i = 0; i < iterations; ++i) {
      zmq::message_t id = receive(router), body = receive(router);
      router.send(id, zmq::send_flags::sndmore);
      router.send(zmq::buffer(answer), zmq::send_flags::none);
    }
  });
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  std::vector<double> us;
  for (int i = 0; i < iterations; ++i) {
    const auto t = Clock::now();
    const std::vector<char> request(bytes_each_way, 2);  // built per call, as the agent encodes one
    dealer.send(zmq::buffer(request), zmq::send_flags::none);
    (void)receive(dealer);
    us.push_back(seconds_since(t) * 1e6);
  }
  echo.join();
  return us;
}

// The server's work per gradient without any transport, as ParameterServer does it: the gradient
// into the one flat tensor, one Adam step over it, its values out.
double apply_us(const agents::A3cOptions& a3c, int observation_size, int iterations) {
  torch::manual_seed(1);
  agents::ActorCritic net(agents::ActorCriticSpec{observation_size, a3c.hidden});
  torch::Tensor flat = torch::tensor(agents::flat_parameters(net), torch::kFloat).set_requires_grad(true);
  torch::optim::Adam adam(std::vector<torch::Tensor>{flat}, torch::optim::AdamOptions(a3c.learning_rate).eps(a3c.optimizer_eps));
  const std::vector<float> g(static_cast<std::size_t>(agents::parameter_count(net)), 1e-4f);
  std::vector<float> out;
  std::size_t sink = 0;
  std::vector<double> us;
  for (int i = 0; i < iterations; ++i) {
    const auto t = Clock::now();
    flat.mutable_grad() = torch::tensor(g, torch::kFloat);
    adam.step();
    out.assign(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
    sink += out.size();
    us.push_back(seconds_since(t) * 1e6);
  }
  return sink == 1 ? 0 : summarize(us).median_us;  // median, like the round trips
}

double decision_us(const agents::A3cOptions& a3c, int iterations) {
  torch::manual_seed(1);
  agents::A3cPolicy policy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, a3c.hidden}));
  std::vector<float> obs(orchestra::StateLayout::kStateSize, 0.3f);
  int sum = 0;
  const auto t = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    obs[static_cast<std::size_t>(i % obs.size())] = static_cast<float>(i % 7) / 7.0f;
    sum += policy.predict(obs);
  }
  const double us = seconds_since(t) * 1e6 / iterations;
  return sum == 12345678 ? 0 : us;  // keep the loop
}

// A copy of the training config whose experiments set runtime.replicas to `replicas`.
std::string with_replicas(const std::string& train_path, const std::string& replicas) {
  const auto dir = std::filesystem::temp_directory_path() / "orchestra-bench-a3c";
  std::filesystem::create_directories(dir);
  YAML::Node train = YAML::LoadFile(train_path);
  YAML::Node experiments;
  int k = 0;
  for (const auto& e : train["experiments"]) {
    YAML::Node env = YAML::LoadFile((std::filesystem::path(train_path).parent_path() / e.as<std::string>()).string());
    env["runtime"]["replicas"] = replicas;
    const auto path = dir / ("experiment" + std::to_string(k++) + ".yaml");
    std::ofstream(path) << env;
    experiments.push_back(path.string());
  }
  train["experiments"] = experiments;
  const auto path = dir / "train.yaml";
  std::ofstream(path) << train;
  return path.string();
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/a3c_train.yaml";
  std::int64_t updates = 6;
  std::string replicas;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--updates" && i + 1 < argc) updates = std::stoll(argv[++i]);
    else if (a == "--replicas" && i + 1 < argc) replicas = argv[++i];
    else path = a;
  }
  if (!replicas.empty()) path = with_replicas(path, replicas);
  env::set_compute_threads(1);
  const experiments::TrainConfig config = experiments::load_train_config(path);
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "config " << path << ", " << std::thread::hardware_concurrency() << " hardware threads\n\n";

  const StepsResult one = env_steps(config, 1, updates);
  const StepsResult two = env_steps(config, 2, updates);
  std::cout << "## Environment steps per second (one step = one epoch)\n\n"
            << "| agents | steps | steps/s | wall s per step and agent |\n|---|---|---|---|\n"
            << "| 1 | " << one.steps << " | " << one.steps_per_s << " | " << one.mean_step_s << " |\n"
            << "| 2 | " << two.steps << " | " << two.steps_per_s << " | " << two.mean_step_s << " |\n\n"
            << "speed-up with 2 agents: " << two.steps_per_s / one.steps_per_s << "x (goal >= 1.6x)\n\n";

  const int iterations = 2000;
  torch::manual_seed(1);
  agents::ActorCritic net(agents::ActorCriticSpec{config.observation_size, config.a3c.hidden});
  const std::size_t bytes = agents::kHeaderBytes + 4 * static_cast<std::size_t>(agents::parameter_count(net));
  // Alternating blocks, so that a change in the machine's load while the benchmark runs lands on
  // both paths instead of skewing the ratio.
  constexpr int kBlocks = 5;
  std::vector<double> ps_us, bare_us;
  for (int b = 0; b < kBlocks; ++b) {
    const auto p = server_round_trip(config.a3c, config.observation_size, iterations / kBlocks);
    const auto e = bare_round_trip(bytes, iterations / kBlocks);
    ps_us.insert(ps_us.end(), p.begin(), p.end());
    bare_us.insert(bare_us.end(), e.begin(), e.end());
  }
  const RoundTrip ps = summarize(ps_us), bare = summarize(bare_us);
  const double compute = apply_us(config.a3c, config.observation_size, iterations);
  std::cout << "## Round trip, " << bytes << " bytes each way, tcp loopback, " << iterations << " iterations in " << kBlocks
            << " alternating blocks\n\n"
            << "| path | mean us | median us |\n|---|---|---|\n"
            << "| parameter server (decode, Adam step, encode parameters) | " << ps.mean_us << " | " << ps.median_us << " |\n"
            << "| bare ZeroMQ DEALER/ROUTER echo | " << bare.mean_us << " | " << bare.median_us << " |\n\n"
            << "server compute alone (set gradients, Adam step, copy parameters out), median: " << compute << " us\n"
            << "ratio (median): " << ps.median_us / bare.median_us << "x (goal <= 2x)\n"
            << "ratio without the compute (median): " << (ps.median_us - compute) / bare.median_us << "x\n\n";

  const double decide = decision_us(config.a3c, 20000);
  std::cout << "## One barrier decision\n\n"
            << "greedy network on the " << orchestra::StateLayout::kStateSize << "-entry state: " << decide << " us; "
            << "an epoch (one agent, wall): " << one.mean_step_s * 1e3 << " ms; share: "
            << 100.0 * decide * 1e-6 / one.mean_step_s << "% (goal < 5%)\n";
  return 0;
}
