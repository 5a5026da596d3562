// The parameter server and its agents over ZeroMQ, ranks as threads (gloo's test/base_test.h) on
// inproc:// or tcp://127.0.0.1:* endpoints: the protocol, determinism, learning, CURVE, checkpoints
// and resume, the learning rate's schedule. What peers that misbehave do to the server:
// test_parameter_server_robustness.cpp.
#include <doctest/doctest.h>

#include <exception>
#include <filesystem>
#include <optional>
#include <sstream>
#include <future>
#include <thread>

#include "agents/agent_worker.hpp"
#include "agents/parameter_server.hpp"
#include "agents/policy_file.hpp"
#include "agents/protocol.hpp"
#include "agents/toy_barrier_env.hpp"
#include "common/errors.hpp"
#include "test_helpers.hpp"
#include "toy_server.hpp"

namespace {

using testing::ManualAgent;
using testing::recv_with_timeout;
using testing::server_options;
using testing::small_options;

// One server and `agents` toy agents, each on its own thread; rethrows the first error.
struct Run {
  agents::ServeResult server;
  std::vector<agents::AgentResult> agents;
  std::vector<float> parameters;
};

Run train(const agents::ParameterServerOptions& options, int agents_count,
          const std::optional<agents::CurveKeys>& agent_keys = std::nullopt) {
  zmq::context_t context;
  agents::ParameterServer server(context, options);
  const std::string endpoint = server.endpoint();
  std::vector<std::future<agents::AgentResult>> workers;
  for (int k = 0; k < agents_count; ++k) {
    workers.push_back(std::async(std::launch::async, [&context, &options, endpoint, agent_keys] {
      std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs;  // a3c.envs_per_agent toy environments
      for (int j = 0; j < options.a3c.envs_per_agent; ++j) envs.push_back(std::make_unique<agents::ToyBarrierEnv>());
      agents::AgentWorkerOptions ao;
      ao.a3c = options.a3c;
      ao.connect = endpoint;
      ao.curve = agent_keys;
      return agents::AgentWorker(context, ao, std::move(envs)).run();
    }));
  }
  Run run;
  run.server = server.serve();
  for (auto& w : workers) run.agents.push_back(w.get());
  run.parameters = agents::flat_parameters(server.network());
  return run;
}

// The greedy policy's mean time to the toy environment's target over 20 fixed episodes.
double greedy_time_to_target(agents::ActorCritic& net) {
  double total = 0;
  for (std::uint64_t seed = 1000; seed < 1020; ++seed) {
    agents::ToyBarrierEnv env;
    auto obs = env.reset(seed).observation;
    agents::A3cPolicy policy(agents::ActorCritic(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, net->spec().hidden}));
    agents::copy_parameters(net, policy.network());
    orchestra::StepResult step;
    do step = env.step(policy.predict(obs));
    while ((obs = step.observation, !step.terminated && !step.truncated));
    total += step.info.clock_ms;
  }
  return total / 20;
}

}  // namespace

TEST_CASE("protocol: encode/decode round trip, and every malformed frame is named, not thrown") {
  const agents::Message m{agents::MessageType::Gradient, 3, 17, 5, {1.0f, -2.0f, 0.5f}};
  const std::vector<char> bytes = agents::encode(m);
  CHECK(bytes.size() == agents::kHeaderBytes + 12);
  const agents::Decoded d = agents::decode(bytes.data(), bytes.size(), 3);
  CHECK(d.drop == agents::DropReason::None);
  CHECK(d.message.agent_id == 3);
  CHECK(d.message.params_version == 17);
  CHECK(d.message.values == m.values);
  CHECK(agents::decode(bytes.data(), bytes.size(), 2).drop == agents::DropReason::Oversized);
  CHECK(agents::decode(bytes.data(), bytes.size() - 1, 3).drop == agents::DropReason::Malformed);
  CHECK(agents::decode(bytes.data(), 7, 3).drop == agents::DropReason::Malformed);
  std::vector<char> wrong = bytes;
  wrong[0] = 'X';
  CHECK(agents::decode(wrong.data(), wrong.size(), 3).drop == agents::DropReason::Malformed);
  wrong = bytes;
  wrong[6] = 99;  // unknown type
  CHECK(agents::decode(wrong.data(), wrong.size(), 3).drop == agents::DropReason::Malformed);
  agents::Message nan = m;
  nan.values[1] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<char> nan_bytes = agents::encode(nan);
  CHECK(agents::decode(nan_bytes.data(), nan_bytes.size(), 3).drop == agents::DropReason::NotFinite);
  // A count field claiming 2^60 values in a short frame: oversized, and no allocation follows.
  std::vector<char> liar = agents::encode(agents::Message{agents::MessageType::Params, 0, 0, 0, {}});
  const std::uint64_t huge = std::uint64_t{1} << 60;
  std::memcpy(liar.data() + 32, &huge, 8);
  CHECK(agents::decode(liar.data(), liar.size(), 1000).drop == agents::DropReason::Oversized);
}

TEST_CASE("one agent, one seed, trained twice: the same parameters, and the same files") {
  testing::TempDir dir;
  auto options = server_options(small_options(40), "inproc://a3c-determinism");
  options.out_dir = dir / "a";
  const Run a = train(options, 1);
  auto again = options;
  again.out_dir = dir / "b";
  const Run b = train(again, 1);
  for (const char* file : {"train.csv", "policy.pt", "checkpoint.pt"}) {
    CAPTURE(file);
    CHECK(testing::read_text(dir / ("a/" + std::string(file))) == testing::read_text(dir / ("b/" + std::string(file))));
  }
  CHECK(a.server.outcome == agents::ServeOutcome::Finished);
  CHECK(a.server.updates == 40);
  CHECK(a.agents[0].exit == agents::AgentExit::Stopped);
  CHECK(a.server.drops.total() == 0);
  CHECK(a.parameters == b.parameters);
  CHECK(a.agents[0].env_steps == b.agents[0].env_steps);
  // ... and training moved them away from the seed's initial network.
  zmq::context_t context;
  auto fresh = options;
  fresh.a3c.total_updates = 1;
  fresh.bind = "inproc://a3c-fresh";
  agents::ParameterServer untrained(context, fresh);
  CHECK(agents::flat_parameters(untrained.network()) != a.parameters);
}

TEST_CASE("PPO over the same server: deterministic for one agent, and it learns the toy barrier") {
  auto a3c = small_options(0);
  a3c.algorithm = "ppo";
  a3c.ppo_rollout_steps = 32;
  a3c.ppo_epochs = 2;
  a3c.ppo_minibatch = 16;
  a3c.gamma = 0.95;
  a3c.learning_rate = 3e-3;
  a3c.total_updates = 40;  // 10 rollouts of 4 minibatch steps
  const auto options = server_options(a3c, "inproc://ppo-determinism");
  const Run a = train(options, 1);
  const Run b = train(options, 1);
  CHECK(a.server.outcome == agents::ServeOutcome::Finished);
  CHECK(a.parameters == b.parameters);
  CHECK(a.agents[0].gradients_pushed == 40);
  CHECK(a.agents[0].env_steps == 10 * 32);

  // Learning: on the toy environment the greedy policy learns to walk to the best level b* and
  // stay; the untrained network's episodes take about twice as long.
  auto longer = options;
  longer.a3c.total_updates = 800;
  longer.bind = "inproc://ppo-learns";
  zmq::context_t context;
  agents::ParameterServer untrained(context, [&] { auto o = longer; o.bind = "inproc://ppo-untrained"; o.a3c.total_updates = 1; return o; }());
  const Run trained = train(longer, 1);
  agents::ActorCritic net(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, {16}});
  agents::set_flat_parameters(net, trained.parameters);
  const double before = greedy_time_to_target(untrained.network()), after = greedy_time_to_target(net);
  INFO("greedy time to target before " << before << ", after " << after);
  CHECK(after < before);
  // The optimum walks straight to b* (one level per epoch, each step away costing 0.25): 10 units
  // plus 0.25 * d (d - 1) / 2 for a start d levels off, 11.35 on average over d in 0..6.
  CHECK(after < 13.0);
}

TEST_CASE("K environments per agent over the server: deterministic for one agent, K episodes per update, and it learns") {
  auto a3c = small_options(0);
  a3c.envs_per_agent = 8;
  a3c.n_steps = 1000;  // whole episodes, as the shipped recipes
  a3c.gamma = 0.95;
  a3c.learning_rate = 3e-3;
  a3c.total_updates = 20;
  const auto options = server_options(a3c, "inproc://vector-determinism");
  const Run a = train(options, 1);
  const Run b = train(options, 1);
  CHECK(a.server.outcome == agents::ServeOutcome::Finished);
  CHECK(a.parameters == b.parameters);
  CHECK(a.server.episodes == 20 * 8);  // toy episodes all last 10 steps: 8 end together, one push
  CHECK(a.agents[0].env_steps == 20 * 8 * 10);
  CHECK(a.server.drops.total() == 0);

  auto longer = options;
  longer.a3c.total_updates = 300;
  longer.bind = "inproc://vector-learns";
  zmq::context_t context;
  agents::ParameterServer untrained(context, [&] { auto o = longer; o.bind = "inproc://vector-untrained"; o.a3c.total_updates = 1; return o; }());
  const Run trained = train(longer, 1);
  agents::ActorCritic net(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, {16}});
  agents::set_flat_parameters(net, trained.parameters);
  const double before = greedy_time_to_target(untrained.network()), after = greedy_time_to_target(net);
  INFO("greedy time to target before " << before << ", after " << after);
  CHECK(after < before);
  CHECK(after < 13.0);  // the optimum averages 11.35 (see the PPO case)
}

TEST_CASE("more episodes end at once than one message of a small network holds: every one is counted") {
  auto a3c = small_options(6);
  a3c.hidden = {2};  // 8 x 2 + 2 + 2 x 3 + 3 + 2 + 1 = 30 parameters: 6 episodes per message
  a3c.envs_per_agent = 40;
  a3c.n_steps = 1000;
  const Run r = train(server_options(a3c, "inproc://many-episodes"), 1);
  CHECK(r.server.outcome == agents::ServeOutcome::Finished);
  CHECK(r.server.episodes == 6 * 40);
  CHECK(r.server.drops.total() == 0);
}

TEST_CASE("two agents train together without waiting for each other") {
  const Run r = train(server_options(small_options(60), "tcp://127.0.0.1:*"), 2);
  CHECK(r.server.outcome == agents::ServeOutcome::Finished);
  CHECK(r.server.updates == 60);
  CHECK(r.server.agents_joined == 2);
  CHECK(r.agents[0].gradients_pushed > 0);
  CHECK(r.agents[1].gradients_pushed > 0);
  CHECK(r.agents[0].exit == agents::AgentExit::Stopped);
  CHECK(r.agents[1].exit == agents::AgentExit::Stopped);
}

TEST_CASE("CURVE: the right keys train, a peer without them is refused, public binds need keys") {
  REQUIRE(agents::curve_available());
  const agents::CurveKeys keys = agents::generate_curve_keys();
  testing::TempDir dir;
  agents::write_curve_keys(dir / "keys", keys);
  const agents::CurveKeys read = agents::read_curve_keys(dir / "keys");
  CHECK(read.server.public_key == keys.server.public_key);
  CHECK(read.client.secret_key == keys.client.secret_key);

  zmq::context_t context;
  auto options = server_options(small_options(10), "tcp://0.0.0.0:*");
  CHECK_THROWS_AS(agents::ParameterServer(context, options), std::invalid_argument);
  options.bind = "tcp://127.0.0.1:*";
  options.curve = keys;
  options.a3c.idle_timeout_s = 5;
  agents::ParameterServer server(context, options);
  // An impostor: knows the server's public key but has its own client key pair.
  agents::CurveKeys impostor = agents::generate_curve_keys();
  impostor.server = keys.server;
  impostor.server.secret_key.clear();
  agents::ToyBarrierEnv env_bad, env_good;
  auto ao = agents::AgentWorkerOptions{};
  ao.a3c = options.a3c;
  ao.a3c.reply_timeout_s = 1.5;
  ao.connect = server.endpoint();
  ao.curve = impostor;
  std::future<agents::AgentResult> bad = std::async(std::launch::async, [&] { return agents::AgentWorker(context, ao, env_bad).run(); });
  auto good_options = ao;
  good_options.curve = keys;
  good_options.a3c.reply_timeout_s = 10;
  std::future<agents::AgentResult> good = std::async(std::launch::async, [&] { return agents::AgentWorker(context, good_options, env_good).run(); });
  const agents::ServeResult result = server.serve();
  CHECK(result.updates == 10);
  CHECK(good.get().exit == agents::AgentExit::Stopped);
  CHECK(bad.get().exit == agents::AgentExit::ServerTimeout);
  CHECK(result.agents_joined == 1);
}

TEST_CASE("checkpoints: resume continues from the saved update counter with the same network") {
  testing::TempDir dir;
  auto options = server_options(small_options(30), "inproc://a3c-ckpt-1");
  options.out_dir = dir.path.string();
  options.a3c.checkpoint_every = 10;
  options.a3c.log_every = 5;
  options.identity = {{"a3c", {{"learning_rate", 0.0007}}}, {"reward", "eq1"}};
  const Run first = train(options, 1);
  CHECK(first.server.updates == 30);
  CHECK(std::filesystem::exists(dir / "checkpoint.pt"));
  CHECK(std::filesystem::exists(dir / "policy.pt"));
  CHECK(agents::flat_parameters(agents::A3cPolicy::load(dir / "policy.pt").network()) == first.parameters);

  zmq::context_t context;
  auto resumed = options;
  resumed.resume = true;
  resumed.bind = "inproc://a3c-ckpt-2";
  resumed.a3c.total_updates = 50;
  {
    agents::ParameterServer server(context, resumed);
    CHECK(server.updates() == 30);
    CHECK(agents::flat_parameters(server.network()) == first.parameters);
  }
  resumed.bind = "inproc://a3c-ckpt-3";
  const Run second = train(resumed, 1);
  CHECK(second.server.start_updates == 30);
  CHECK(second.server.updates == 50);
  const std::string csv = testing::read_text(dir / "train.csv");
  CHECK(csv.rfind("update,episodes,mean_reward,mean_time_to_target_ms,reached_share,dropped\n", 0) == 0);
  CHECK(csv.find("\n30,") != std::string::npos);
  CHECK(csv.find("\n50,") != std::string::npos);
  CHECK(csv.find("\n35,") != std::string::npos);

  auto missing = options;
  missing.out_dir = (dir / "empty");
  missing.resume = true;
  CHECK_THROWS_WITH_AS(agents::ParameterServer(context, missing), doctest::Contains("no checkpoint to resume from"),
                       common::DataError);

  // Another optimizer than the checkpoint's: one data error, not libtorch's internal assert.
  auto other_optimizer = resumed;
  other_optimizer.bind = "inproc://a3c-ckpt-4";
  other_optimizer.a3c.optimizer = options.a3c.optimizer == agents::OptimizerKind::Adam ? agents::OptimizerKind::RmsProp
                                                                                      : agents::OptimizerKind::Adam;
  CHECK_THROWS_WITH_AS(agents::ParameterServer(context, other_optimizer),
                       doctest::Contains("checkpoint.pt: the checkpoint's network or optimizer state does not fit this config's"),
                       common::DataError);
  CHECK(testing::read_text(dir / "train.csv") == csv);  // nothing lost

  // Another config than the checkpoint's: refused naming the keys, before the optimizer is even read.
  auto other_config = other_optimizer;
  other_config.bind = "inproc://a3c-ckpt-5";
  other_config.identity["a3c"]["learning_rate"] = 0.001;
  CHECK_THROWS_WITH_AS(agents::ParameterServer(context, other_config),
                       doctest::Contains("checkpoint.pt: --resume: trained with another config than this one: a3c.learning_rate (0.0007, now 0.001): "
                                         "resume with the config it was trained with"),
                       common::ConfigError);
  CHECK(testing::read_text(dir / "train.csv") == csv);
  auto unchecked = resumed;  // no identity given (a test of the transport): nothing compared
  unchecked.bind = "inproc://a3c-ckpt-6";
  unchecked.identity = nullptr;
  CHECK_NOTHROW(agents::ParameterServer(context, unchecked));
}

TEST_CASE("a3c.init_policy: the server starts from the file's network and trains on from it, another shape is refused") {
  testing::TempDir dir;
  auto first = server_options(small_options(20), "inproc://a3c-init-1");
  first.out_dir = (dir / "first");
  const Run trained = train(first, 1);
  const std::string policy = (dir / "first/policy.pt");

  zmq::context_t context;
  auto fresh = server_options(small_options(20), "inproc://a3c-init-2");
  fresh.a3c.seed = 12;
  auto tuned = fresh;
  tuned.a3c.init_policy = policy;
  tuned.bind = "inproc://a3c-init-3";
  {
    agents::ParameterServer from_seed(context, fresh);
    CHECK(agents::flat_parameters(from_seed.network()) != trained.parameters);  // seed 12 draws another network
    agents::ParameterServer from_file(context, tuned);
    CHECK(agents::flat_parameters(from_file.network()) == trained.parameters);
  }
  tuned.bind = "inproc://a3c-init-4";
  tuned.out_dir = (dir / "tuned");
  const Run fine_tuned = train(tuned, 1);
  CHECK(fine_tuned.server.updates == 20);
  CHECK(fine_tuned.parameters != trained.parameters);  // it trained on from there
  // --resume continues from the checkpoint, whatever init_policy says.
  auto resumed = tuned;
  resumed.resume = true;
  resumed.bind = "inproc://a3c-init-5";
  {
    agents::ParameterServer server(context, resumed);
    CHECK(agents::flat_parameters(server.network()) == fine_tuned.parameters);
  }

  auto wider = tuned;
  wider.out_dir.clear();
  wider.bind = "inproc://a3c-init-6";
  wider.a3c.hidden = {32};
  CHECK_THROWS_WITH_AS(agents::ParameterServer(context, wider),
                       doctest::Contains("policy.pt is a network of 8 observations, hidden [16] and 3 actions; this training's is 8 observations, hidden [32] and 3 actions"),
                       std::invalid_argument);
}

namespace {

// Adam's step for a constant gradient g is lr * g / (|g| + eps) from the first step on
// (m-hat = g, v-hat = g^2), so each step's size shows the learning rate it used.
std::vector<double> adam_steps(agents::ParameterServerOptions options, int pushes) {
  zmq::context_t context;
  agents::ParameterServer server(context, options);
  // Read before serving starts: network() refreshes the reply cache the serving thread reads.
  const auto count = static_cast<std::size_t>(agents::parameter_count(server.network()));
  std::future<agents::ServeResult> serving = std::async(std::launch::async, [&server] { return server.serve(); });
  ManualAgent agent(context, server.endpoint(), count);
  std::vector<double> steps;
  const auto start = static_cast<std::uint64_t>(server.updates());
  for (int k = 0; k < pushes; ++k) steps.push_back(agent.push(start + static_cast<std::uint64_t>(k), 0.01f));
  agent.bye(start + static_cast<std::uint64_t>(pushes));
  server.request_stop();
  serving.get();
  return steps;
}

}  // namespace

TEST_CASE("lr_decay linear: each server step uses learning_rate x (1 - update / total), also after --resume") {
  testing::TempDir dir;
  auto options = server_options(small_options(8), "inproc://a3c-lr-1");
  options.a3c.learning_rate = 0.01;
  const double adam = 0.01 / (0.01 + options.a3c.optimizer_eps);  // g / (|g| + eps), g = 0.01
  for (double step : adam_steps(options, 3)) CHECK(step == doctest::Approx(0.01 * adam).epsilon(1e-4));

  options.a3c.lr_decay = agents::LearningRateDecay::Linear;
  options.bind = "inproc://a3c-lr-2";
  options.out_dir = dir.path.string();
  const std::vector<double> steps = adam_steps(options, 3);
  CHECK(steps[0] == doctest::Approx(0.01 * adam).epsilon(1e-4));
  CHECK(steps[1] == doctest::Approx(0.00875 * adam).epsilon(1e-4));
  CHECK(steps[2] == doctest::Approx(0.0075 * adam).epsilon(1e-4));
  // The checkpoint written at the stop (update 3, Adam's moments included): the resumed server's
  // next step is update 3, at 5/8 of the rate.
  options.resume = true;
  options.bind = "inproc://a3c-lr-3";
  const std::vector<double> resumed = adam_steps(options, 1);
  CHECK(resumed[0] == doctest::Approx(0.00625 * adam).epsilon(1e-4));
}

TEST_CASE("an agent whose server stopped early (Ctrl-C) joins it again after serve --resume, and trains to the end") {
  testing::TempDir dir;
  // ipc://, so that the second server binds the endpoint the first one held.
  auto options = server_options(small_options(30), "ipc://" + (dir / "server.ipc"));
  options.out_dir = dir.path.string();
  options.a3c.checkpoint_every = 5;
  options.a3c.idle_timeout_s = 5;  // without the join again, the resumed server waits this long for nobody
  zmq::context_t context;
  std::ostringstream log;
  std::future<agents::AgentResult> agent;
  agents::ServeResult first;
  {
    agents::ParameterServer server(context, options);
    agent = std::async(std::launch::async, [&context, &options, &log] {
      std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs;
      envs.push_back(std::make_unique<agents::ToyBarrierEnv>());
      agents::AgentWorkerOptions ao;
      ao.a3c = options.a3c;
      ao.connect = options.bind;
      ao.log = &log;  // the agent's thread alone writes it; read once it is done
      return agents::AgentWorker(context, ao, std::move(envs)).run();
    });
    // Stopped at update 10 as Ctrl-C stops it: its checkpoint written, the agent told in the drain.
    first = server.serve([&server] { return server.updates() < 10; });
  }
  CHECK(first.outcome == agents::ServeOutcome::Stopped);
  CHECK(first.updates == 10);
  auto resumed = options;
  resumed.resume = true;
  agents::ParameterServer server(context, resumed);
  const agents::ServeResult second = server.serve();
  const agents::AgentResult a = agent.get();
  CHECK(second.outcome == agents::ServeOutcome::Finished);
  CHECK(second.start_updates == 10);
  CHECK(second.updates == 30);
  CHECK(second.agents_joined == 1);  // the same agent: before, it left with exit 0 at update 10
  CHECK(a.exit == agents::AgentExit::Stopped);
  CHECK(a.rejoins == 1);
  CHECK(a.gradients_pushed >= 30);
  MESSAGE(log.str());
  CHECK(log.str().find("the server stopped before training was over (update 10); joining again within 10 s") != std::string::npos);
  CHECK(log.str().find("joined again 1 time") != std::string::npos);
}

TEST_CASE("Stop says why: training over, another network, an agent the server does not know") {
  zmq::context_t context;
  auto options = server_options(small_options(2), "inproc://stop-reasons");
  agents::ParameterServer server(context, options);
  const std::size_t count = static_cast<std::size_t>(agents::parameter_count(server.network()));
  std::thread serving([&server] { (void)server.serve(); });
  const auto reason = [](const agents::Decoded& d) {
    CHECK(d.message.type == agents::MessageType::Stop);
    return static_cast<agents::StopReason>(d.message.aux);
  };
  {
    ManualAgent stranger(context, options.bind, count);
    // An id this server never gave on this connection: what an agent of a restarted server sends.
    CHECK(reason(stranger.exchange(agents::Message{agents::MessageType::Gradient, stranger.id + 7, 0, 0,
                                                   std::vector<float>(count, 0.0f)})) == agents::StopReason::UnknownAgent);
    zmq::socket_t other(context, zmq::socket_type::dealer);
    other.set(zmq::sockopt::linger, 0);
    other.connect(options.bind);
    other.send(zmq::buffer(agents::encode(agents::Message{agents::MessageType::Hello, 0, 0, 3, {static_cast<float>(count)}})),
               zmq::send_flags::none);
    zmq::message_t r = recv_with_timeout(other, 10000);
    CHECK(reason(agents::decode(r.data(), r.size(), count)) == agents::StopReason::OtherNetwork);
    CHECK(stranger.exchange(agents::Message{agents::MessageType::Gradient, stranger.id, 0, 0, std::vector<float>(count, 0.0f)}).message.type ==
          agents::MessageType::Params);
    CHECK(reason(stranger.exchange(agents::Message{agents::MessageType::Gradient, stranger.id, 1, 0, std::vector<float>(count, 0.0f)})) ==
          agents::StopReason::TrainingOver);
    stranger.bye(2);  // so the server's closing drain ends now
  }
  serving.join();
}

TEST_CASE("an agent whose server died with its push joins the server started again at the endpoint, and trains to the end") {
  testing::TempDir dir;
  auto options = server_options(small_options(20), "ipc://" + (dir / "server.ipc"));
  zmq::context_t context;
  // A server that welcomes the agent, takes its first push and dies without an answer (killed).
  zmq::socket_t dying(context, zmq::socket_type::router);
  dying.set(zmq::sockopt::linger, 0);
  dying.bind(options.bind);
  // The dying server's network, built before the agent's thread starts (libtorch's module setup
  // from two threads at once is a race TSan reports).
  const agents::ToyBarrierEnv toy;
  agents::ActorCritic net(agents::ActorCriticSpec{toy.observation_size(), options.a3c.hidden, orchestra::num_barrier_actions(toy.max_move())});
  const std::vector<float> parameters = agents::flat_parameters(net);
  std::ostringstream log;
  std::future<agents::AgentResult> agent = std::async(std::launch::async, [&context, &options, &log] {
    std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs;
    envs.push_back(std::make_unique<agents::ToyBarrierEnv>());
    agents::AgentWorkerOptions ao;
    ao.a3c = options.a3c;
    ao.a3c.reply_timeout_s = 2;
    ao.connect = options.bind;
    ao.log = &log;
    return agents::AgentWorker(context, ao, std::move(envs)).run();
  });
  const auto receive = [&dying, &parameters] {
    zmq::message_t identity = recv_with_timeout(dying, 10000), payload;
    REQUIRE(identity.size() > 0);
    REQUIRE(dying.recv(payload, zmq::recv_flags::dontwait));
    return std::make_pair(identity.to_string(), agents::decode(payload.data(), payload.size(), parameters.size()).message);
  };
  const auto [identity, hello] = receive();
  REQUIRE(hello.type == agents::MessageType::Hello);
  dying.send(zmq::buffer(identity), zmq::send_flags::sndmore);
  dying.send(zmq::buffer(agents::encode(agents::Message{agents::MessageType::Welcome, 0, 0, 5, parameters})), zmq::send_flags::none);
  const auto [same, push] = receive();
  REQUIRE(push.type == agents::MessageType::Gradient);
  dying.close();
  // Started again: before, the agent gave up after its reply timeout and exited 1.
  agents::ParameterServer server(context, options);
  const agents::ServeResult result = server.serve();
  const agents::AgentResult a = agent.get();
  MESSAGE(log.str());
  CHECK(result.outcome == agents::ServeOutcome::Finished);
  CHECK(result.updates == 20);
  CHECK(result.agents_joined == 1);
  CHECK(a.exit == agents::AgentExit::Stopped);
  CHECK(a.rejoins == 1);
  CHECK(log.str().find("agent 0: no answer to a push within 2 s; joining again within 2 s") != std::string::npos);
}
