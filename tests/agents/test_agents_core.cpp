// A3C building blocks: n-step returns and advantages worked by hand, the loss, gradient clipping,
// the a3c: options reader, and policy files (save then load acts the same).
#include <doctest/doctest.h>

#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "agents/a3c_loss.hpp"
#include "agents/a3c_options.hpp"
#include "agents/greedy_barrier_agent.hpp"
#include "agents/policy_file.hpp"
#include "agents/zip_records.hpp"
#include "agents/ppo_loss.hpp"
#include "agents/returns.hpp"
#include "agents/rollout.hpp"
#include "agents/toy_barrier_env.hpp"
#include "common/errors.hpp"
#include "test_helpers.hpp"

using doctest::Approx;

TEST_CASE("n-step returns bootstrap from V(s_t) and give R - V as advantage") {
  // gamma = 0.9, rewards 1, 0, -1, bootstrap V(s_3) = 2:
  //   R_2 = -1 + 0.9 * 2     = 0.8
  //   R_1 =  0 + 0.9 * 0.8   = 0.72
  //   R_0 =  1 + 0.9 * 0.72  = 1.648
  const agents::NStepTargets t = agents::n_step_targets({1, 0, -1}, {0.5, 0.25, 1.0}, 2.0, 0.9);
  REQUIRE(t.returns.size() == 3);
  CHECK(t.returns[0] == Approx(1.648));
  CHECK(t.returns[1] == Approx(0.72));
  CHECK(t.returns[2] == Approx(0.8));
  CHECK(t.advantages[0] == Approx(1.648 - 0.5));
  CHECK(t.advantages[1] == Approx(0.72 - 0.25));
  CHECK(t.advantages[2] == Approx(0.8 - 1.0));
}

TEST_CASE("a terminal rollout bootstraps from 0, gamma 0 keeps only the reward") {
  const agents::NStepTargets terminal = agents::n_step_targets({1, 1}, {0, 0}, 0.0, 0.5);
  CHECK(terminal.returns[0] == Approx(1.5));  // 1 + 0.5 * 1
  CHECK(terminal.returns[1] == Approx(1.0));
  const agents::NStepTargets myopic = agents::n_step_targets({3, -2}, {1, 1}, 10.0, 0.0);
  CHECK(myopic.returns[0] == Approx(3));
  CHECK(myopic.returns[1] == Approx(-2));
  CHECK(myopic.advantages[1] == Approx(-3));
}

TEST_CASE("n-step returns reject mismatched sizes and gamma out of range") {
  CHECK_THROWS_AS(agents::n_step_targets({1, 2}, {0}, 0, 0.9), std::invalid_argument);
  CHECK_THROWS_AS(agents::n_step_targets({1}, {0}, 0, 1.5), std::invalid_argument);
}

TEST_CASE("the A3C loss matches its terms computed by hand") {
  // Two steps, logits zero (uniform pi = 1/3): log pi = -ln 3 for any action, entropy = ln 3.
  agents::ActorCriticOutput out{torch::zeros({2, 3}), torch::tensor({0.5f, -1.0f})};
  agents::A3cOptions o;
  o.value_loss_coef = 0.5;
  o.entropy_coef = 0.01;
  const agents::A3cLoss loss = agents::a3c_loss(out, {0, 2}, {1.5, 1.0}, {2.0, -1.0}, o);
  const double ln3 = std::log(3.0);
  CHECK(loss.policy == Approx(-((-ln3) * 2.0 + (-ln3) * -1.0) / 2));  // -mean(log pi * A) = ln3 / 2
  CHECK(loss.value == Approx(((1.5 - 0.5) * (1.5 - 0.5) + (1.0 + 1.0) * (1.0 + 1.0)) / 2));  // 2.5
  CHECK(loss.entropy == Approx(ln3));
  CHECK(loss.total.item<double>() == Approx(loss.policy + 0.5 * 2.5 - 0.01 * ln3).epsilon(1e-5));
  CHECK_THROWS_AS(agents::a3c_loss(out, {0}, {1.0}, {1.0}, o), std::invalid_argument);
}

TEST_CASE("GAE: deltas discounted by gamma * lambda, cut at an episode's end, returns = A + V") {
  // gamma 0.9, lambda 0.5; steps 0-1 end an episode at step 1, step 2 bootstraps from V = 2.
  //   delta_2 = -1 + 0.9 * 2 - 1.0  = -0.2          A_2 = -0.2
  //   delta_1 =  0 + 0 - 0.25       = -0.25         A_1 = -0.25 (done: nothing carried over)
  //   delta_0 =  1 + 0.9 * 0.25 - 0.5 = 0.725       A_0 = 0.725 + 0.45 * -0.25 = 0.6125
  const agents::NStepTargets t = agents::gae_targets({1, 0, -1}, {0.5, 0.25, 1.0}, {false, true, false}, 2.0, 0.9, 0.5);
  CHECK(t.advantages[2] == Approx(-0.2));
  CHECK(t.advantages[1] == Approx(-0.25));
  CHECK(t.advantages[0] == Approx(0.6125));
  CHECK(t.returns[0] == Approx(0.6125 + 0.5));
  CHECK(t.returns[2] == Approx(-0.2 + 1.0));
  // lambda 1 with no episode end is the n-step return's advantage.
  const agents::NStepTargets mc = agents::gae_targets({1, 0, -1}, {0.5, 0.25, 1.0}, {false, false, false}, 2.0, 0.9, 1.0);
  const agents::NStepTargets n_step = agents::n_step_targets({1, 0, -1}, {0.5, 0.25, 1.0}, 2.0, 0.9);
  for (std::size_t i = 0; i < 3; ++i) CHECK(mc.advantages[i] == Approx(n_step.advantages[i]));
  CHECK_THROWS_AS(agents::gae_targets({1}, {0}, {}, 0, 0.9, 0.9), std::invalid_argument);
  CHECK_THROWS_AS(agents::gae_targets({1}, {0}, {false}, 0, 0.9, 1.5), std::invalid_argument);
}

TEST_CASE("the PPO loss: the clipped surrogate by hand, inside and outside the clip") {
  // Uniform pi (log pi = -ln 3). Sample 0: pi_old = 1/6, ratio 2, A = +1: clipped to 1.2 * 1.
  // Sample 1: pi_old = 1/2, ratio 2/3, A = -1: min(-2/3, -0.8) = -0.8 (clipped, the lower side).
  // Sample 2: pi_old = 1/3, ratio 1, A = 0.5: 0.5.
  agents::ActorCriticOutput out{torch::zeros({3, 3}), torch::tensor({0.0f, 1.0f, 2.0f})};
  agents::A3cOptions o;
  o.ppo_clip = 0.2;
  o.value_loss_coef = 0.5;
  o.entropy_coef = 0.01;
  const agents::PpoLoss loss = agents::ppo_loss(out, {0, 1, 2}, {std::log(1.0 / 6), std::log(0.5), std::log(1.0 / 3)}, {1.0, -1.0, 0.5},
                                                {1.0, 1.0, 1.0}, o);
  CHECK(loss.policy == Approx(-(1.2 - 0.8 + 0.5) / 3));
  CHECK(loss.value == Approx((1.0 + 0.0 + 1.0) / 3));
  CHECK(loss.entropy == Approx(std::log(3.0)));
  CHECK(loss.clip_fraction == Approx(2.0 / 3));
  CHECK(loss.total.item<double>() == Approx(loss.policy + 0.5 * loss.value - 0.01 * std::log(3.0)).epsilon(1e-5));
  CHECK_THROWS_AS(agents::ppo_loss(out, {0}, {0.0}, {1.0}, {1.0}, o), std::invalid_argument);
}

TEST_CASE("gradient clipping rescales the global norm and keeps the direction") {
  torch::nn::Linear layer(2, 1);
  layer->weight.mutable_grad() = torch::tensor({{3.0f, 0.0f}});
  layer->bias.mutable_grad() = torch::tensor({4.0f});
  CHECK(agents::clip_gradients(*layer, 1.0) == Approx(5.0));
  CHECK(layer->weight.grad()[0][0].item<double>() == Approx(0.6).epsilon(1e-4));
  CHECK(layer->bias.grad()[0].item<double>() == Approx(0.8).epsilon(1e-4));
  CHECK(agents::clip_gradients(*layer, 0.0) == Approx(1.0).epsilon(1e-4));  // 0: measure only
}

TEST_CASE("a3c: options read with defaults, and errors name file:line and key") {
  const YAML::Node node = YAML::Load("a3c:\n  n_steps: 8\n  hidden: [32]\n  optimizer: rmsprop\n")["a3c"];
  const agents::A3cOptions o = agents::read_a3c_options(node, "train.yaml");
  CHECK(o.n_steps == 8);
  CHECK(o.hidden == std::vector<int>{32});
  CHECK(o.optimizer == agents::OptimizerKind::RmsProp);
  CHECK(o.gamma == Approx(0.99));
  CHECK(agents::read_a3c_options(YAML::Node(), "x.yaml").agents == 2);

  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  n_steps: -3\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.n_steps: expected a positive integer, got -3", common::ConfigError);
  // ZeroMQ's send timeout is an int of milliseconds: a longer reply timeout crashed every agent.
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  reply_timeout_s: 3000000\n")["a3c"], "t.yaml"),
                       doctest::Contains("t.yaml:2: a3c.reply_timeout_s: "), common::ConfigError);
  CHECK(agents::read_a3c_options(YAML::Load("a3c:\n  reply_timeout_s: 1000000\n")["a3c"], "t.yaml").reply_timeout_s == 1e6);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  gamma: 0.9\n  gama: 1\n")["a3c"], "t.yaml"),
                       doctest::Contains("t.yaml:3: a3c.gama: unknown key (known here: agent_silence_s, agents,"),
                       common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  hidden: [8, x]\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.hidden[1]: expected a positive integer, got 'x'", common::ConfigError);

  const agents::A3cOptions ppo = agents::read_a3c_options(
      YAML::Load("a3c:\n  algorithm: ppo\n  ppo_rollout_steps: 64\n  ppo_epochs: 3\n  ppo_minibatch: 16\n  ppo_clip: 0.1\n  gae_lambda: 0.9\n")["a3c"], "t.yaml");
  CHECK(ppo.algorithm == "ppo");
  CHECK(ppo.ppo_rollout_steps == 64);
  CHECK(ppo.ppo_epochs == 3);
  CHECK(ppo.ppo_minibatch == 16);
  CHECK(ppo.ppo_clip == Approx(0.1));
  CHECK(ppo.gae_lambda == Approx(0.9));
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  ppo_epochs: 3\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.ppo_epochs: an option of the ppo learner: set algorithm: ppo to use it", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  algorithm: dqn\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.algorithm: expected one of a3c, ppo, got 'dqn'", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  algorithm: ppo\n  ppo_clip: 0\n")["a3c"], "t.yaml"),
                       doctest::Contains("a3c.ppo_clip: expected a number > 0"), common::ConfigError);
  CHECK(agents::read_a3c_options(YAML::Node(), "x.yaml").init_policy.empty());
  CHECK(agents::read_a3c_options(YAML::Node(), "x.yaml").lr_decay == agents::LearningRateDecay::None);
  CHECK(agents::read_a3c_options(YAML::Load("a3c:\n  lr_decay: linear\n")["a3c"], "t.yaml").lr_decay == agents::LearningRateDecay::Linear);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  seed: 3\n  lr_decay: cosine\n")["a3c"], "t.yaml"),
                       "t.yaml:3: a3c.lr_decay: expected one of none, linear, got 'cosine'", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  seed: 3\n  init_policy: no/such.pt\n")["a3c"], "t.yaml"),
                       "t.yaml:3: a3c.init_policy: no/such.pt: no such file", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  init_policy: ../no/such.pt\n")["a3c"], "configs/t.yaml"),
                       "configs/t.yaml:2: a3c.init_policy: no/such.pt: no such file", common::ConfigError);
}

TEST_CASE("a3c.init_policy is found relative to the config's folder, as every file a config names") {
  testing::TempDir temp;
  const std::filesystem::path dir = temp.path;
  std::filesystem::create_directories(dir / "configs");
  std::filesystem::create_directories(dir / "pretrained");
  testing::write_text((dir / "pretrained" / "p.pt").string(), "not read here");
  const YAML::Node a3c = YAML::Load("a3c:\n  init_policy: ../pretrained/p.pt\n")["a3c"];
  CHECK(agents::read_a3c_options(a3c, (dir / "configs" / "t.yaml").string()).init_policy == (dir / "pretrained" / "p.pt").string());
  const YAML::Node absolute = YAML::Load("a3c:\n  init_policy: " + (dir / "pretrained" / "p.pt").string() + "\n")["a3c"];
  CHECK(agents::read_a3c_options(absolute, "elsewhere/t.yaml").init_policy == (dir / "pretrained" / "p.pt").string());
}

TEST_CASE("the learning rate: constant without decay, linear decay reaches 0 at total_updates") {
  agents::A3cOptions o;
  o.learning_rate = 0.01;
  o.total_updates = 4;
  CHECK(agents::learning_rate_at(o, 0) == 0.01);
  CHECK(agents::learning_rate_at(o, 3) == 0.01);
  o.lr_decay = agents::LearningRateDecay::Linear;
  CHECK(agents::learning_rate_at(o, 0) == Approx(0.01));
  CHECK(agents::learning_rate_at(o, 1) == Approx(0.0075));
  CHECK(agents::learning_rate_at(o, 3) == Approx(0.0025));
  CHECK(agents::learning_rate_at(o, 4) == 0.0);
  CHECK(agents::learning_rate_at(o, 9) == 0.0);  // a resume past the end (a lowered total) does not go negative
}

namespace {

std::vector<std::vector<float>> random_observations(int count, int size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<float>> out(static_cast<std::size_t>(count), std::vector<float>(static_cast<std::size_t>(size)));
  for (auto& o : out)
    for (auto& x : o) x = static_cast<float>(static_cast<double>(rng() >> 11) / 9007199254740992.0) * 4.0f - 2.0f;
  return out;
}

}  // namespace

TEST_CASE("a saved policy loads with the same weights and gives the same actions") {
  testing::TempDir dir;
  torch::manual_seed(3);
  agents::PolicyControl control;
  control.move = orchestra::BarrierMove::Multiplicative;
  control.factor = 1.5;
  control.unit_ms = 150.0;
  control.interval = orchestra::DecisionInterval::Rounds;
  control.interval_rounds = 3;
  control.min_barrier_ms = 20;
  control.max_barrier_ms = 4000;
  control.min_barrier_x_start = 0.25;
  control.max_barrier_x_start = 16;
  control.floor_cap_steps = 3;
  control.min_barrier_steps = 1;
  control.lcm_cap_steps = 4;
  control.lcm_cap_x_comm = 0.5;
  control.lcm_cap_above_steps = 12;
  control.weighting = env::AverageWeighting::AllWorkers;
  control.state_features = orchestra::StateFeatures::Progress;
  control.start = agents::BarrierStart::Planned;
  control.planned_min_barrier_x_start = 0.5;
  control.planned_max_barrier_x_start = 2;
  control.max_move = 2;  // moves of x1.5 and x2.25 either way: 5 outputs
  agents::A3cPolicy policy(agents::ActorCritic(agents::ActorCriticSpec{12, {16, 8}, 5}), 42, control, {{"reward", "time"}, {"config", "x"}});
  policy.save(dir / "policy.pt");
  agents::A3cPolicy loaded = agents::A3cPolicy::load(dir / "policy.pt");
  CHECK(loaded.updates() == 42);
  CHECK(loaded.control() == control);  // every controller option round-trips
  CHECK(loaded.training() == std::map<std::string, std::string>{{"reward", "time"}, {"config", "x"}});
  CHECK(loaded.observation_size() == 12);
  CHECK(agents::flat_parameters(loaded.network()) == agents::flat_parameters(policy.network()));
  std::set<int> moves;
  std::mt19937_64 rng(5);
  for (const auto& obs : random_observations(200, 12, 7)) {
    CHECK(loaded.predict(obs) == policy.predict(obs));
    CHECK(loaded.probabilities(obs) == policy.probabilities(obs));
    moves.insert(loaded.predict(obs, false, &rng));
  }
  CHECK(moves == std::set<int>{-2, -1, 0, 1, 2});  // index i of the 5 outputs is the move i - 2
  // The network's outputs must be the moves' count.
  CHECK_THROWS_AS(agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{12, {16, 8}}), 0, control), std::invalid_argument);
  // The file is the zip that torch.load reads; its root record is the pickled dict.
  const std::string bytes = testing::read_text(dir / "policy.pt");
  CHECK(bytes.substr(0, 2) == "PK");
  // Its moves are the "actions" list; one that is not -m ... m in order is refused.
  c10::impl::GenericDict root = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
  CHECK(root.at("actions").toIntVector() == std::vector<std::int64_t>{-2, -1, 0, 1, 2});
  root.insert_or_assign("actions", std::vector<std::int64_t>{-2, 0, -1, 1, 2});
  const std::vector<char> edited = torch::pickle_save(c10::IValue(root));
  testing::write_text(dir / "shuffled.pt", std::string(edited.begin(), edited.end()));
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(dir / "shuffled.pt"), doctest::Contains("actions must be the moves -m ... m in order"),
                       common::DataError);
  // The start: files written before it deploy from LCM's T*; a start of another name is refused.
  c10::impl::GenericDict controller = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict().at("controller").toGenericDict();
  CHECK(controller.at("start").toStringRef() == "planned");
  const auto with_controller = [&](const std::string& name) {
    c10::impl::GenericDict copy = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
    copy.insert_or_assign("controller", controller);
    const std::vector<char> out = torch::pickle_save(c10::IValue(copy));
    testing::write_text(dir / name, std::string(out.begin(), out.end()));
    return dir / name;
  };
  CHECK(controller.erase("start") == 1);
  CHECK(controller.erase("planned_min_T_x_start") == 1);
  CHECK(controller.erase("planned_max_T_x_start") == 1);
  const agents::PolicyControl older = agents::A3cPolicy::load(with_controller("older.pt")).control();
  CHECK(older.start == agents::BarrierStart::Lcm);
  CHECK(older.planned_min_barrier_x_start == 0);
  CHECK(older.planned_max_barrier_x_start == 0);
  controller.insert("planned_min_T_x_start", 4.0);  // a floor above the ceiling of 2 around a planned start
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(with_controller("floor.pt")), doctest::Contains("floor.pt: "), common::DataError);
  CHECK(controller.erase("planned_min_T_x_start") == 1);
  controller.insert("start", std::string("sideways"));
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(with_controller("sideways.pt")), doctest::Contains("controller.start must be lcm or planned, got sideways"),
                       common::DataError);
}

TEST_CASE("loading a missing or foreign file says which and why") {
  testing::TempDir dir;
  // A user's file: a typed DataError (exit 2) naming it, not a generic failure.
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(dir / "nope.pt"), doctest::Contains((dir / "nope.pt").c_str()), common::DataError);
  testing::write_text(dir / "junk.pt", "not a policy");
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(dir / "junk.pt"), doctest::Contains((dir / "junk.pt: not a readable policy file").c_str()), common::DataError);
  // One flipped byte in the pickle's type names fails in TorchScript's type parser, whose report
  // (not a c10::Error) spans four lines: one line naming the file.
  std::string shipped = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/orchestra-a3c.pt");
  const std::size_t type_name = shipped.find("Dict[str");
  REQUIRE(type_name != std::string::npos);
  shipped[type_name + 7] = 's';  // Dict[sts, ...]
  testing::write_text(dir / "flipped.pt", shipped);
  try {
    agents::A3cPolicy::load(dir / "flipped.pt");
    FAIL("a damaged type name loaded");
  } catch (const common::DataError& e) {
    const std::string what = e.what();
    CHECK(what.find(dir / "flipped.pt: not a readable policy file (Unknown type name 'sts'") == 0);
    CHECK(what.find('\n') == std::string::npos);
  }
  testing::write_text(dir / "dict.pt", "");
  c10::impl::GenericDict other(c10::StringType::get(), c10::AnyType::get());
  other.insert("format", std::string("something-else"));
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(other));
  testing::write_text(dir / "dict.pt", std::string(bytes.begin(), bytes.end()));
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(dir / "dict.pt"), doctest::Contains("not an orchestra-a3c policy"),
                       common::DataError);
  // Fields of the wrong type (a hand-made or damaged file): one line naming the file, not a
  // libtorch internal assertion with its backtrace.
  const auto typed = [&](const std::string& name, const c10::IValue& version, const c10::IValue& hidden) {
    c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
    root.insert("format", std::string("orchestra-a3c-policy"));
    root.insert("format_version", version);
    root.insert("observation_size", static_cast<std::int64_t>(22));
    root.insert("hidden", hidden);
    const std::vector<char> b = torch::pickle_save(c10::IValue(root));
    testing::write_text(dir / name, std::string(b.begin(), b.end()));
    return dir / name;
  };
  for (const auto& path : {typed("version.pt", c10::IValue(std::string("two")), c10::IValue(std::vector<std::int64_t>{64})),
                           typed("hidden.pt", c10::IValue(static_cast<std::int64_t>(2)), c10::IValue(std::string("64")))}) {
    CAPTURE(path);
    try {
      agents::A3cPolicy::load(path);
      FAIL("loaded a policy with a field of the wrong type");
    } catch (const common::DataError& e) {
      const std::string message = e.what();
      CHECK(e.exit_code() == 2);
      CHECK(message.rfind(path + ": ", 0) == 0);
      CHECK(message.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("a policy file's counts must be whole numbers in range: none is narrowed to another value") {
  testing::TempDir dir;
  const std::string shipped = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/orchestra-a3c.pt");
  const auto root = [&] { return torch::pickle_load(std::vector<char>(shipped.begin(), shipped.end())).toGenericDict(); };
  const auto write = [&](const std::string& name, const c10::impl::GenericDict& edited) {
    const std::vector<char> out = torch::pickle_save(c10::IValue(edited));
    testing::write_text(dir / name, std::string(out.begin(), out.end()));
    return dir / name;
  };
  const auto refused = [&](const std::string& name, const c10::impl::GenericDict& edited, const std::string& expected) {
    CAPTURE(name);
    const std::string path = write(name, edited);
    try {
      agents::A3cPolicy::load(path);
      FAIL("loaded " << name);
    } catch (const common::DataError& e) {
      const std::string what = e.what();
      CHECK(what.rfind(path + ": ", 0) == 0);
      CHECK(what.find(expected) != std::string::npos);
    }
  };
  agents::A3cPolicy original = agents::A3cPolicy::load(write("same.pt", root()));
  REQUIRE(original.network()->spec().hidden.size() >= 1);
  // 2^32 + 64 was read as a 64-wide layer (an int's low 32 bits).
  c10::impl::GenericDict wide = root();
  std::vector<std::int64_t> hidden(original.network()->spec().hidden.begin(), original.network()->spec().hidden.end());
  hidden[0] += std::int64_t{1} << 32;
  wide.insert_or_assign("hidden", hidden);
  refused("wide.pt", wide, "each of hidden's layer widths must be a whole number in [1, 65536], got 4294967");
  c10::impl::GenericDict observed = root();
  observed.insert_or_assign("observation_size", (std::int64_t{1} << 32) + original.observation_size());
  refused("observed.pt", observed, "observation_size must be a whole number in [1, 65536]");
  c10::impl::GenericDict negative = root();
  negative.insert_or_assign("updates", std::int64_t{-5});
  refused("negative.pt", negative, "updates must be a whole number in [0, ");
  const auto with_rounds = [&](const c10::IValue& rounds) {
    c10::impl::GenericDict edited = root();
    c10::impl::GenericDict controller = edited.at("controller").toGenericDict();
    controller.insert_or_assign("interval_rounds", rounds);
    edited.insert_or_assign("controller", controller);
    return edited;
  };
  // 1.9 rounds was read as 1; 2^31 + 3 as 3.
  refused("fraction.pt", with_rounds(1.9), "controller.interval_rounds must be a whole number in [1, 1073741824]");
  refused("huge.pt", with_rounds((std::int64_t{1} << 31) + 3), "controller.interval_rounds must be a whole number in [1, 1073741824], got 2147483651");
  // A whole number written as a float (Python's 2.0) is that number.
  CHECK(agents::A3cPolicy::load(write("float.pt", with_rounds(2.0))).control().interval_rounds == 2);
}

TEST_CASE("a policy file whose bytes changed is refused by its CRC-32, and an outsized pickle before it is read") {
  testing::TempDir dir;
  const std::string shipped = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/orchestra-a3c.pt");
  const std::vector<char> bytes(shipped.begin(), shipped.end());
  const std::vector<agents::ZipRecord> records = agents::read_zip_records(bytes);
  CHECK_FALSE(agents::first_crc_mismatch(bytes, records).has_value());
  // One bit of one weight (the lowest of a float's mantissa): still finite, so nothing else saw it,
  // and the file loaded as other weights.
  const auto weights = std::find_if(records.begin(), records.end(), [](const agents::ZipRecord& r) { return r.size >= 1024 && r.name.find("/data/") != std::string::npos; });
  REQUIRE(weights != records.end());
  std::string flipped = shipped;
  flipped[weights->data_offset + 100] = static_cast<char>(flipped[weights->data_offset + 100] ^ 0x01);
  testing::write_text(dir / "flipped.pt", flipped);
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(dir / "flipped.pt"),
                       doctest::Contains((dir / "flipped.pt: a damaged file: the bytes of " + weights->name + " do not match their CRC-32").c_str()),
                       common::DataError);
  // A zip cut short, or bytes that are no zip: named as such, one line.
  testing::write_text(dir / "cut.pt", shipped.substr(0, shipped.size() - 30));
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(dir / "cut.pt"), doctest::Contains("cut.pt: not a readable policy file ("), common::DataError);
  // Lists nested 200,000 deep overflowed libtorch's unpickler (SIGSEGV): its pickle, 400 KB where
  // a policy's is 2 KB, is refused before it is read.
  std::string nested = "\x80\x02" + std::string(200000, ']') + std::string(199999, 'a') + ".";
  std::string zip;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&zip](const void* data, std::size_t size) {
      zip.append(static_cast<const char*>(data), size);
      return size;
    });
    writer.writeRecord("data.pkl", nested.data(), nested.size());
    writer.writeEndOfFile();
  }
  testing::write_text(dir / "deep.pt", zip);
  CHECK_THROWS_WITH_AS(agents::A3cPolicy::load(dir / "deep.pt"), doctest::Contains("deep.pt: not a policy file this toolkit reads (its pickle is 400002 bytes"),
                       common::DataError);
}

TEST_CASE("rollouts stop at the episode end and the toy env is seeded") {
  agents::ToyBarrierEnv env_a, env_b;
  torch::manual_seed(1);
  agents::ActorCritic net(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, {16}});
  agents::RolloutRunner ra(env_a, 9), rb(env_b, 9);
  std::mt19937_64 ga(5), gb(5);
  int finished = 0;
  for (int i = 0; i < 20; ++i) {
    const agents::Rollout a = ra.collect(net, 5, ga);
    const agents::Rollout b = rb.collect(net, 5, gb);
    CHECK(a.action_indices == b.action_indices);
    CHECK(a.rewards == b.rewards);
    CHECK(a.observations.size() <= 5);
    finished += static_cast<int>(a.finished.size());
    if (!a.finished.empty()) CHECK(a.observations.size() >= 1);
  }
  CHECK(finished >= 2);
  CHECK(ra.steps() == rb.steps());
  const agents::Rollout r = ra.collect(net, 3, ga);
  agents::A3cOptions o;
  const agents::GradientResult g = agents::rollout_gradient(net, r, o);
  CHECK(static_cast<std::int64_t>(g.gradient.size()) == agents::parameter_count(net));
  double norm = 0;
  for (float x : g.gradient) norm += double(x) * x;
  CHECK(std::sqrt(norm) <= o.max_grad_norm + 1e-4);
}

// A controller is started for its preflight and again for its run (issue 42: every policy built
// once): an agent with a random stream starts it over at start(), so the run acts as a fresh one.
TEST_CASE("the random agent starts its stream over at start(): a started-again controller acts the same") {
  agents::RandomBarrierAgent agent(17);
  const std::vector<float> observation(4, 0.0f);
  std::vector<int> first, again;
  for (int k = 0; k < 32; ++k) first.push_back(agent.act(observation));
  agent.start();
  for (int k = 0; k < 32; ++k) again.push_back(agent.act(observation));
  CHECK(first == again);
  CHECK(std::count(first.begin(), first.end(), first.front()) < 32);  // a stream, not a constant
}
