// The trainer's throughput (issue 41): episodes per core-minute and environment steps per second of
// the whole training loop (parameter server + agents, over ZeroMQ on tcp loopback, as `orchestra
// train` runs them, here as threads of one process so that one getrusage counts every thread's CPU:
// the server's, the agents', ZeroMQ's I/O threads'), today's trainer (a3c.envs_per_agent 1) against
// the vectorized one (K environments per agent), on the same environment in the same run:
//   1. the acting forward alone: libtorch's forward (as RolloutRunner calls it) against the plain
//      C++ one (agents/acting_network.hpp) at batch sizes 1-256, the per-call overhead that decided
//      the plain forward;
//   2. the toy environment with a per-step cost of 0 (agents/toy_barrier_env.hpp): the trainer's
//      own ceiling, what a microseconds-per-round environment leaves the trainer to pay;
//   3. the real local-sgd environment (configs/a3c_general.yaml: libtorch training on a drawn
//      cluster every episode), where real training dominates;
//   4. what an update of K episodes learns: the greedy toy policy after the same number of
//      episodes, today's trainer against K environments per agent (printed before 3, which is long).
// Variants run interleaved, `--repeat` times, and each figure is the median; ratios are of medians
// measured in the same run. The recipe is the shipped one (hidden [64, 64], whole-episode returns:
// n_steps 1000, gamma 1), so today's trainer pushes one gradient per episode and the vectorized
// one a gradient of K episodes.
//
// usage: bench_trainer [--repeat N] [--agents A] [--envs K,K,...] [--toy-episodes E] [--real-episodes E]
//                      [--real-envs K] [--skip-real] [--skip-forward] [--skip-today] [--learn-episodes E]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "agents/acting_network.hpp"
#include "agents/agent_worker.hpp"
#include "agents/parameter_server.hpp"
#include "agents/policy_file.hpp"
#include "agents/toy_barrier_env.hpp"
#include "env/train/compute_threads.hpp"
#include "experiments/runner/train_config.hpp"
#include "orchestra/rl_state.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---- 1. the acting forward ----

struct ForwardCost {
  double libtorch_us = 0;  // per call
  double plain_us = 0;
};

ForwardCost forward_cost(int batch, int observation_size, const std::vector<int>& hidden, double seconds) {
  torch::manual_seed(1);
  agents::ActorCritic net(agents::ActorCriticSpec{observation_size, hidden});
  agents::ActingNetwork plain(net->spec());
  plain.load(net);
  std::vector<float> obs(static_cast<std::size_t>(batch * observation_size));
  for (std::size_t i = 0; i < obs.size(); ++i) obs[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  double sink = 0;
  const auto time_per_call = [&](auto&& call) {
    std::int64_t calls = 0;
    const auto start = Clock::now();
    while (seconds_since(start) < seconds) {
      for (int i = 0; i < 16; ++i) call();
      calls += 16;
    }
    return seconds_since(start) * 1e6 / static_cast<double>(calls);
  };
  ForwardCost c;
  c.libtorch_us = time_per_call([&] {
    // As RolloutRunner::take_step acts: no autograd, softmax, copied out as doubles.
    torch::NoGradGuard no_grad;
    const agents::ActorCriticOutput out = net->forward(torch::from_blob(obs.data(), {batch, observation_size}, torch::kFloat));
    const torch::Tensor p = torch::softmax(out.logits, -1).to(torch::kDouble).contiguous();
    const torch::Tensor v = out.value.to(torch::kDouble).contiguous();
    sink += p.data_ptr<double>()[0] + v.data_ptr<double>()[0];
  });
  agents::ActingOutput out;
  c.plain_us = time_per_call([&] {
    plain.forward(obs.data(), batch, out);
    sink += out.probabilities[0] + out.values[0];
  });
  return sink == 0.123456789 ? ForwardCost{} : c;
}

// ---- 2, 3. the training loop ----

struct LoopResult {
  std::int64_t episodes = 0;
  std::int64_t env_steps = 0;
  std::int64_t updates = 0;
  double cpu_s = 0;
  double wall_s = 0;
  std::vector<float> parameters;  // the server's network at the end
  double episodes_per_core_minute() const { return static_cast<double>(episodes) / (cpu_s / 60.0); }
  double steps_per_s() const { return static_cast<double>(env_steps) / wall_s; }
  double episodes_per_s() const { return static_cast<double>(episodes) / wall_s; }
  double cpu_us_per_step() const { return cpu_s * 1e6 / static_cast<double>(env_steps); }
};

using EnvFactory = std::function<std::vector<std::unique_ptr<orchestra::BarrierEnv>>(int agent, int envs_per_agent)>;

// One server and `agents` agent threads of `envs_per_agent` environments each, until about
// `episodes` episodes (updates = episodes / envs_per_agent: one episode per rollout).
LoopResult training_loop(const agents::A3cOptions& base, int observation_size, int agents_count, int envs_per_agent,
                         std::int64_t episodes, const EnvFactory& make_envs) {
  zmq::context_t context;
  agents::ParameterServerOptions s;
  s.a3c = base;
  s.a3c.agents = agents_count;
  s.a3c.envs_per_agent = envs_per_agent;
  s.a3c.total_updates = std::max<std::int64_t>(1, episodes / envs_per_agent);
  s.a3c.log_every = s.a3c.total_updates + 1;
  s.observation_size = observation_size;
  s.bind = "tcp://127.0.0.1:*";
  agents::ParameterServer server(context, s);
  std::vector<std::vector<std::unique_ptr<orchestra::BarrierEnv>>> envs;
  for (int k = 0; k < agents_count; ++k) envs.push_back(make_envs(k, envs_per_agent));  // data loaded here, off the clock
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  std::vector<std::future<agents::AgentResult>> workers;
  for (int k = 0; k < agents_count; ++k)
    workers.push_back(std::async(std::launch::async, [&, k] {
      agents::AgentWorkerOptions o;
      o.a3c = s.a3c;
      o.connect = server.endpoint();
      return agents::AgentWorker(context, o, std::move(envs[static_cast<std::size_t>(k)])).run();
    }));
  const agents::ServeResult served = server.serve();
  LoopResult r;
  for (auto& w : workers) r.env_steps += w.get().env_steps;
  r.wall_s = seconds_since(start);
  r.cpu_s = cpu_seconds() - cpu_start;
  r.episodes = served.episodes;
  r.updates = served.updates;
  r.parameters = agents::flat_parameters(server.network());
  return r;
}

struct Variant {
  std::string label;
  int envs_per_agent = 1;
  std::int64_t episodes = 0;
};

std::map<std::string, std::vector<LoopResult>> run_variants(const std::vector<Variant>& variants, int repeat, const agents::A3cOptions& a3c,
                                                            int observation_size, int agents_count, const EnvFactory& make_envs) {
  std::map<std::string, std::vector<LoopResult>> results;
  for (int rep = 0; rep < repeat; ++rep)
    for (const Variant& v : variants) {
      results[v.label].push_back(training_loop(a3c, observation_size, agents_count, v.envs_per_agent, v.episodes, make_envs));
      const LoopResult& r = results[v.label].back();
      std::cerr << "  " << v.label << " run " << rep + 1 << ": " << r.episodes << " episodes, " << r.cpu_s << " s CPU, " << r.wall_s
                << " s wall\n";
    }
  return results;
}

void print_table(const std::vector<Variant>& variants, const std::map<std::string, std::vector<LoopResult>>& results) {
  const auto med = [&](const std::string& label, auto field) {
    std::vector<double> xs;
    for (const LoopResult& r : results.at(label)) xs.push_back(field(r));
    return median(xs);
  };
  const double reference = med(variants.front().label, [](const LoopResult& r) { return r.episodes_per_core_minute(); });
  std::cout << "| trainer | episodes | updates | CPU s | wall s | episodes per core-minute | x today | CPU us per env step | env steps/s (wall) | episodes/s (wall) |\n"
            << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Variant& v : variants) {
    const double epcm = med(v.label, [](const LoopResult& r) { return r.episodes_per_core_minute(); });
    std::cout << "| " << v.label << " | " << med(v.label, [](const LoopResult& r) { return double(r.episodes); }) << " | "
              << med(v.label, [](const LoopResult& r) { return double(r.updates); }) << " | "
              << med(v.label, [](const LoopResult& r) { return r.cpu_s; }) << " | " << med(v.label, [](const LoopResult& r) { return r.wall_s; })
              << " | " << epcm << " | " << epcm / reference << "x | " << med(v.label, [](const LoopResult& r) { return r.cpu_us_per_step(); })
              << " | " << med(v.label, [](const LoopResult& r) { return r.steps_per_s(); })
              << " | " << med(v.label, [](const LoopResult& r) { return r.episodes_per_s(); }) << " |\n";
  }
  std::cout << "\n";
}

// The greedy policy's mean time to the toy environment's target over 20 fixed episodes (the
// optimum walks straight to the best level: 11.35 on average).
double greedy_toy_time(const std::vector<float>& parameters, const std::vector<int>& hidden) {
  agents::A3cPolicy policy(agents::ActorCritic(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, hidden}));
  agents::set_flat_parameters(policy.network(), parameters);
  double total = 0;
  for (std::uint64_t seed = 1000; seed < 1020; ++seed) {
    agents::ToyBarrierEnv env;
    std::vector<float> obs = env.reset(seed).observation;
    orchestra::StepResult step;
    do step = env.step(policy.predict(obs));
    while ((obs = step.observation, !step.terminated && !step.truncated));
    total += step.info.clock_ms;
  }
  return total / 20;
}

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3, agents_count = 2, real_envs = 4;
  std::vector<int> envs = {16, 64, 256};
  std::int64_t toy_episodes = 20000, real_episodes = 12, learn_episodes = 4000;
  bool skip_real = false, skip_forward = false, skip_today = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--repeat") repeat = std::stoi(next());
    else if (a == "--agents") agents_count = std::stoi(next());
    else if (a == "--envs") envs = parse_list(next());
    else if (a == "--toy-episodes") toy_episodes = std::stoll(next());
    else if (a == "--real-episodes") real_episodes = std::stoll(next());
    else if (a == "--learn-episodes") learn_episodes = std::stoll(next());  // 0: skip part 4
    else if (a == "--real-envs") real_envs = std::stoi(next());
    else if (a == "--skip-real") skip_real = true;
    else if (a == "--skip-forward") skip_forward = true;
    else if (a == "--skip-today") skip_today = true;  // for profiling the vectorized trainer alone
    else throw std::invalid_argument("unknown argument " + a);
  }
  env::set_compute_threads(1);  // as `orchestra train`: the agents are the parallelism
  std::cout << std::fixed << std::setprecision(1);
  std::cout << std::thread::hardware_concurrency() << " hardware threads; medians of " << repeat << " interleaved runs\n\n";

  // The shipped recipe (configs/a3c_general.yaml's a3c: section).
  const experiments::TrainConfig general = experiments::load_train_config(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/a3c_general.yaml");
  agents::A3cOptions a3c = general.a3c;
  a3c.checkpoint_every = 1 << 30;
  a3c.snapshot_every = 0;

  if (!skip_forward) {
  std::cout << "## 1. The acting forward, one call (network " << orchestra::StateLayout::kStateSize << "-64-64, one thread)\n\n"
            << "| batch | libtorch us/call | plain C++ us/call | libtorch us/row | plain us/row | libtorch / plain |\n|---:|---:|---:|---:|---:|---:|\n";
  std::cout << std::setprecision(2);
  for (int batch : {1, 4, 16, 64, 256}) {
    const ForwardCost c = forward_cost(batch, orchestra::StateLayout::kStateSize, a3c.hidden, 0.3);
    std::cout << "| " << batch << " | " << c.libtorch_us << " | " << c.plain_us << " | " << c.libtorch_us / batch << " | " << c.plain_us / batch
              << " | " << c.libtorch_us / c.plain_us << "x |\n";
  }
  std::cout << std::setprecision(1) << "\n";
  }

  const EnvFactory toy = [](int, int k) {
    std::vector<std::unique_ptr<orchestra::BarrierEnv>> out;
    for (int j = 0; j < k; ++j) out.push_back(std::make_unique<agents::ToyBarrierEnv>(0.0));
    return out;
  };
  std::vector<Variant> toy_variants = {{"today (1 env per agent)", 1, std::max<std::int64_t>(toy_episodes / 8, 1)}};
  if (skip_today) toy_variants.clear();
  for (int k : envs) toy_variants.push_back({std::to_string(k) + " envs per agent", k, toy_episodes});
  std::cout << "## 2. Toy environment, step cost 0: the trainer alone (" << agents_count << " agents)\n\n";
  print_table(toy_variants, run_variants(toy_variants, repeat, a3c, agents::ToyBarrierEnv::kObservationSize, agents_count, toy));

  if (learn_episodes > 0) {
    // Throughput is half the story: an update of K environments is one optimizer step for K
    // episodes. One agent (deterministic), the same episodes budget, the recipe's learning rate
    // and ten times it.
    std::cout << "## 4. Learning per episode on the toy environment (1 agent, " << learn_episodes
              << " episodes; greedy time to target, untrained network then trained; optimum 11.35)\n\n"
              << "| trainer | learning rate | updates | greedy time to target |\n|---|---:|---:|---:|\n";
    torch::manual_seed(a3c.seed);  // the server's initial network (parameter_server.cpp)
    agents::ActorCritic untrained(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, a3c.hidden});
    std::cout << std::setprecision(2) << "| untrained | - | 0 | " << greedy_toy_time(agents::flat_parameters(untrained), a3c.hidden) << " |\n";
    for (double lr : {a3c.learning_rate, 10 * a3c.learning_rate})
      for (int k : std::vector<int>{1, 16, 64}) {
        agents::A3cOptions o = a3c;
        o.learning_rate = lr;
        const LoopResult r = training_loop(o, agents::ToyBarrierEnv::kObservationSize, 1, k, learn_episodes, toy);
        std::cout << "| " << (k == 1 ? std::string("today (1 env)") : std::to_string(k) + " envs") << " | " << std::setprecision(4) << lr
                  << " | " << r.updates << " | " << std::setprecision(2) << greedy_toy_time(r.parameters, a3c.hidden) << " |\n";
      }
    std::cout << std::setprecision(1) << "\n";
  }

  if (!skip_real) {
    experiments::TrainConfig config = general;
    const EnvFactory real = [&config](int agent, int k) {
      config.a3c.envs_per_agent = k;
      return experiments::make_agent_envs(config, agent);
    };
    const std::vector<Variant> real_variants = {{"today (1 env per agent)", 1, real_episodes},
                                                {std::to_string(real_envs) + " envs per agent", real_envs, real_episodes}};
    std::cout << "## 3. The real local-sgd environment (configs/a3c_general.yaml, 1 agent)\n\n";
    print_table(real_variants, run_variants(real_variants, repeat, a3c, general.observation_size, 1, real));
  }
  return 0;
}
