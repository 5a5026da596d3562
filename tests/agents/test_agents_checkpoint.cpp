// The server's checkpoint as bytes: the same training writes the same file, a save after a load
// writes it again, the optimizer's state comes back whole, and a state of another optimizer or
// format is refused (agents/checkpoint.hpp, agents/optimizer_state.hpp). Resuming a training
// through the server is in test_agents_transport.cpp.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "agents/actor_critic.hpp"
#include "agents/checkpoint.hpp"
#include "agents/toy_barrier_env.hpp"
#include "common/errors.hpp"
#include "test_helpers.hpp"

namespace {

// A trained state of `optimizer` over `flat`: a few steps of a fixed gradient.
void take_steps(torch::optim::Optimizer& optimizer, torch::Tensor& flat, int steps) {
  for (int k = 0; k < steps; ++k) {
    flat.mutable_grad() = torch::linspace(-1.0, 1.0, flat.numel()) * (k + 1);
    optimizer.step();
  }
}

}  // namespace

TEST_CASE("checkpoints: the same training writes the same bytes, a save after a load writes them again, and another optimizer's state is refused") {
  testing::TempDir dir;
  const agents::ActorCriticSpec spec{agents::ToyBarrierEnv::kObservationSize, {16}};
  const auto checkpoint = [&](const std::string& name, bool rmsprop, const std::string& from = "") {
    torch::manual_seed(5);
    agents::ActorCritic net(spec);
    torch::Tensor flat = torch::tensor(agents::flat_parameters(net), torch::kFloat).set_requires_grad(true);
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    if (rmsprop) optimizer = std::make_unique<torch::optim::RMSprop>(std::vector<torch::Tensor>{flat}, torch::optim::RMSpropOptions(1e-3));
    else optimizer = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{flat}, torch::optim::AdamOptions(1e-3));
    agents::CheckpointState state;
    if (from.empty()) take_steps(*optimizer, flat, 3);
    else state = agents::load_checkpoint(dir / from, net, *optimizer);
    state.updates = 3;
    agents::save_checkpoint(dir / name, net, *optimizer, state);
    return testing::read_text(dir / name);
  };
  for (const bool rmsprop : {false, true}) {
    CAPTURE(rmsprop);
    const std::string first = checkpoint("a.pt", rmsprop);
    std::vector<torch::Tensor> keep_alive(50, torch::zeros({1000}));  // the next tensors at other addresses
    CHECK(checkpoint("b.pt", rmsprop) == first);
    CHECK(checkpoint("c.pt", rmsprop, "a.pt") == first);
  }
  // The state itself comes back: the fourth step after a load is the fourth step without one.
  torch::manual_seed(5);
  agents::ActorCritic net(spec);
  torch::Tensor flat = torch::tensor(agents::flat_parameters(net), torch::kFloat).set_requires_grad(true);
  torch::optim::Adam straight({flat}, torch::optim::AdamOptions(1e-3));
  take_steps(straight, flat, 3);
  torch::Tensor reloaded = flat.detach().clone().set_requires_grad(true);
  torch::Tensor stateless = flat.detach().clone().set_requires_grad(true);
  flat.mutable_grad() = torch::linspace(-1.0, 1.0, flat.numel()) * 4;
  straight.step();
  torch::optim::Adam resumed({reloaded}, torch::optim::AdamOptions(1e-3));
  checkpoint("three.pt", false);  // the same three steps
  agents::load_checkpoint(dir / "three.pt", net, resumed);
  reloaded.mutable_grad() = torch::linspace(-1.0, 1.0, reloaded.numel()) * 4;
  resumed.step();
  CHECK(torch::equal(reloaded.detach(), flat.detach()));
  torch::optim::Adam without({stateless}, torch::optim::AdamOptions(1e-3));  // the check can fail: without the state, it differs
  stateless.mutable_grad() = torch::linspace(-1.0, 1.0, stateless.numel()) * 4;
  without.step();
  CHECK_FALSE(torch::equal(stateless.detach(), flat.detach()));
  // A checkpoint of the first format (the optimizer state keyed by address): refused, saying so.
  torch::serialize::OutputArchive old;
  old.write("checkpoint_version", c10::IValue(std::int64_t{1}));
  old.save_to(dir / "old.pt");
  CHECK_THROWS_WITH_AS(agents::load_checkpoint(dir / "old.pt", net, resumed),
                       doctest::Contains("old.pt: checkpoint of another format version (1, this toolkit reads 2)"), common::DataError);
  // An RMSprop state into Adam: one data error saying so.
  checkpoint("rms.pt", true);
  CHECK_THROWS_WITH_AS(agents::load_checkpoint(dir / "rms.pt", net, resumed),
                       doctest::Contains("rms.pt: the checkpoint's network or optimizer state does not fit this config's (the optimizer state is rmsprop's, this config's optimizer is adam)"),
                       common::DataError);
}
