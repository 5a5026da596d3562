// `orchestra soup` and agents::average_policies: the uniform model soup of policies of one shape
// and controller (agents/policy_soup.hpp).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "agents/policy_soup.hpp"
#include "common/errors.hpp"
#include "test_helpers.hpp"

namespace {

agents::PolicyControl x4_control() {
  agents::PolicyControl control;
  control.move = orchestra::BarrierMove::Multiplicative;
  control.factor = 4;
  control.interval = orchestra::DecisionInterval::Rounds;
  control.min_barrier_x_start = 0.125;
  control.max_barrier_x_start = 32;
  return control;
}

// A policy of 22 inputs, hidden [8, 4] and 3 actions whose k-th weight is offset + scale * k.
agents::A3cPolicy policy_with(double offset, double scale, std::int64_t updates, agents::PolicyControl control = x4_control()) {
  agents::ActorCritic net(agents::ActorCriticSpec{22, {8, 4}, 3});
  std::vector<float> weights(agents::flat_parameters(net).size());
  for (std::size_t k = 0; k < weights.size(); ++k) weights[k] = static_cast<float>(offset + scale * static_cast<double>(k));
  agents::set_flat_parameters(net, weights);
  return agents::A3cPolicy(net, updates, control, {{"config", "genet-s14-3"}, {"algorithm", "a3c"}});
}

}  // namespace

TEST_CASE("a soup's every weight is the mean of its policies' weights, with the first one's controller and record and the most updates") {
  std::vector<agents::A3cPolicy> three{policy_with(0.5, 0.001, 2000), policy_with(-0.25, 0.003, 3000), policy_with(1.0, -0.002, 1000)};
  agents::A3cPolicy soup = agents::average_policies(three, {"a.pt", "b.pt", "c.pt"});
  const std::vector<float> weights = agents::flat_parameters(soup.network());
  REQUIRE(weights.size() == agents::flat_parameters(three[0].network()).size());
  for (std::size_t k = 0; k < weights.size(); k += 37)
    CHECK(weights[k] == doctest::Approx((0.5 - 0.25 + 1.0) / 3 + (0.001 + 0.003 - 0.002) / 3 * static_cast<double>(k)).epsilon(1e-6));
  CHECK(soup.control() == x4_control());
  CHECK(soup.updates() == 3000);
  CHECK(soup.training().at("config") == "genet-s14-3");
  CHECK(soup.training().at("soup_of") == "a.pt,b.pt,c.pt");

  // A soup of one network with itself is that network: the same moves on any state.
  std::vector<agents::A3cPolicy> twice{policy_with(0.1, 0.0007, 5), policy_with(0.1, 0.0007, 5)};
  agents::A3cPolicy same = agents::average_policies(twice, {"x.pt", "x.pt"});
  CHECK(agents::flat_parameters(same.network()) == agents::flat_parameters(twice[0].network()));
}

TEST_CASE("a soup refuses policies of another shape or controller, naming the files") {
  agents::PolicyControl x2 = x4_control();
  x2.factor = 2;
  std::vector<agents::A3cPolicy> other_moves{policy_with(0, 0.001, 1), policy_with(0, 0.001, 1, x2)};
  CHECK_THROWS_WITH_AS(agents::average_policies(other_moves, {"a.pt", "b.pt"}), doctest::Contains("b.pt: its moves act on T otherwise than a.pt"),
                       common::DataError);
  std::vector<agents::A3cPolicy> other_shape{policy_with(0, 0.001, 1),
                                             agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{22, {8, 8}, 3}), 1, x4_control())};
  CHECK_THROWS_WITH_AS(agents::average_policies(other_shape, {"a.pt", "b.pt"}), doctest::Contains("b.pt: its network (22 observations, hidden [8, 8] and 3 actions)"),
                       common::DataError);
  std::vector<agents::A3cPolicy> one{policy_with(0, 0.001, 1)};
  CHECK_THROWS_AS(agents::average_policies(one, {"a.pt"}), std::invalid_argument);
}

TEST_CASE("orchestra soup writes the mean policy, the same file from the same inputs, and refuses what it cannot average") {
  testing::TempDir dir;
  policy_with(0.5, 0.001, 2000).save(dir / "a.pt");
  policy_with(-0.5, 0.002, 3000).save(dir / "b.pt");
  const std::string bin = ORCHESTRA_BINARY;
  const auto made = testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "b.pt") + " --out " + (dir / "soup.pt"));
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);
  CHECK(made.output.find("the mean of 2 policies written to") != std::string::npos);
  agents::A3cPolicy soup = agents::A3cPolicy::load(dir / "soup.pt");
  const std::vector<float> weights = agents::flat_parameters(soup.network());
  for (std::size_t k = 0; k < weights.size(); k += 41) CHECK(weights[k] == doctest::Approx(0.0015 * static_cast<double>(k)).epsilon(1e-6));
  CHECK(soup.training().at("soup_of") == (dir / "a.pt") + "," + (dir / "b.pt"));
  CHECK(soup.control() == x4_control());

  const auto again = testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "b.pt") + " --out " + (dir / "again.pt"));
  REQUIRE(again.exit_code == 0);
  CHECK(testing::read_text(dir / "again.pt") == testing::read_text(dir / "soup.pt"));

  agents::PolicyControl x2 = x4_control();
  x2.factor = 2;
  policy_with(0, 0.001, 1, x2).save(dir / "x2.pt");
  const auto mixed = testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "x2.pt") + " --out " + (dir / "mixed.pt"));
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.output.find("x2.pt: its moves act on T otherwise than") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "mixed.pt"));
  const auto alone = testing::run_command(bin + " soup " + (dir / "a.pt") + " --out " + (dir / "alone.pt"));
  CHECK(alone.exit_code == 2);
  CHECK(alone.output.find("expected at least two POLICY files") != std::string::npos);
  const auto nowhere = testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "b.pt"));
  CHECK(nowhere.exit_code == 2);
  CHECK(nowhere.output.find("--out FILE is required") != std::string::npos);
  const auto missing = testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "none.pt") + " --out " + (dir / "m.pt"));
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("none.pt") != std::string::npos);

  // --out replaces a policy file only, and none of the ingredients.
  testing::write_text(dir / "notes.txt", "my notes\n");
  const auto notes = testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "b.pt") + " --out " + (dir / "notes.txt"));
  CHECK(notes.exit_code == 2);
  CHECK(notes.output.find("holds a file that is not a policy file") != std::string::npos);
  CHECK(testing::read_text(dir / "notes.txt") == "my notes\n");
  const std::string a_before = testing::read_text(dir / "a.pt");
  const auto onto = testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "b.pt") + " --out " + (dir / "a.pt"));
  CHECK(onto.exit_code == 2);
  CHECK(onto.output.find("is one of the policies averaged") != std::string::npos);
  CHECK(testing::read_text(dir / "a.pt") == a_before);
  CHECK(testing::run_command(bin + " soup " + (dir / "a.pt") + " " + (dir / "b.pt") + " --out " + (dir / "again.pt")).exit_code == 0);
  // A FIFO given as a policy is refused at once (it blocked for good).
  REQUIRE(::mkfifo((dir / "fifo.pt").c_str(), 0600) == 0);
  const auto fifo = testing::run_command("timeout 20 " + bin + " soup " + (dir / "a.pt") + " " + (dir / "fifo.pt") + " --out " + (dir / "f.pt"));
  CHECK(fifo.exit_code == 2);
  CHECK(fifo.output.find("fifo.pt: is not a regular file") != std::string::npos);
}
