// `orchestra redeploy`: a policy file's start and bounds changed, its network untouched; the shipped
// policy is the seed-14 network redeployed from the plan, bounded to [T/4, T] around a planned start
// (BENCHMARKS.md, the twenty-second held-out suite).
#include <doctest/doctest.h>

#include <filesystem>

#include "agents/policy_file.hpp"
#include "test_helpers.hpp"

namespace {

const std::string kSource = ORCHESTRA_SOURCE_DIR;
const std::string kTrained = kSource + "/pretrained/candidates/genet-s14-3-2000.pt";  // LCM's start, the recipe's bounds
const std::string kShipped = kSource + "/pretrained/orchestra-a3c.pt";

std::string redeploy(const std::string& flags) { return std::string(ORCHESTRA_BINARY) + " redeploy " + kTrained + " " + flags; }

}  // namespace

TEST_CASE("orchestra redeploy changes the start and bounds a policy file records and nothing else, and made the shipped policy") {
  testing::TempDir dir;
  const auto r = testing::run_command(redeploy("--start planned --planned-min-T-x-start 0.25 --planned-max-T-x-start 1 --out " + (dir / "p.pt")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  agents::A3cPolicy trained = agents::A3cPolicy::load(kTrained);
  agents::A3cPolicy redeployed = agents::A3cPolicy::load(dir / "p.pt");
  CHECK(trained.control().start == agents::BarrierStart::Lcm);
  agents::PolicyControl expected = trained.control();
  expected.start = agents::BarrierStart::Planned;
  expected.planned_min_barrier_x_start = 0.25;
  expected.planned_max_barrier_x_start = 1;
  CHECK(redeployed.control() == expected);
  CHECK(agents::flat_parameters(redeployed.network()) == agents::flat_parameters(trained.network()));
  CHECK(redeployed.updates() == trained.updates());
  std::map<std::string, std::string> record = trained.training();
  record["redeployed_from"] = kTrained;
  CHECK(redeployed.training() == record);
  // The shipped policy is exactly that (so the command in pretrained/candidates/README.md rebuilds it).
  agents::A3cPolicy shipped = agents::A3cPolicy::load(kShipped);
  CHECK(shipped.control() == expected);
  CHECK(agents::flat_parameters(shipped.network()) == agents::flat_parameters(trained.network()));
  CHECK(shipped.training().at("redeployed_from") == "pretrained/candidates/genet-s14-3-2000.pt");
  // One flag alone changes only its own field.
  REQUIRE(testing::run_command(redeploy("--start planned --out " + (dir / "start.pt"))).exit_code == 0);
  agents::PolicyControl start_only = trained.control();
  start_only.start = agents::BarrierStart::Planned;
  CHECK(agents::A3cPolicy::load(dir / "start.pt").control() == start_only);
  REQUIRE(testing::run_command(redeploy("--min-T-x-start 0.5 --max-T-x-start 8 --out " + (dir / "bounds.pt"))).exit_code == 0);
  agents::PolicyControl bounds_only = trained.control();
  bounds_only.min_barrier_x_start = 0.5;
  bounds_only.max_barrier_x_start = 8;
  CHECK(agents::A3cPolicy::load(dir / "bounds.pt").control() == bounds_only);
}

TEST_CASE("orchestra redeploy: bounds the controller refuses, an unknown start or nothing to change is one line, non-zero, nothing written") {
  testing::TempDir dir;
  const auto out = " --out " + (dir / "bad.pt");
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {"--min-T-x-start 2 --max-T-x-start 1", "the bounds given: "},
           {"--planned-min-T-x-start 2", "the bounds given: orchestra barrier controller: --planned-min-T-x-start: expected a factor in [0, 1]"},
           {"--min-T-x-start 2", "the bounds given: orchestra barrier controller: --min-T-x-start: expected a factor in [0, 1]"},
           {"--start sideways", "--start: expected lcm or planned, got sideways"},
           {"--max-T-x-start -1", "--max-T-x-start"},
           {"", "nothing to change"}}) {
    CAPTURE(flags);
    const auto r = testing::run_command(redeploy(flags + out));
    CHECK(r.exit_code != 0);
    CHECK(r.output.find(says) != std::string::npos);
    CHECK(r.output.find('\n') == r.output.size() - 1);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "bad.pt"));
  // A file of another kind at --out is refused, not replaced by a policy.
  testing::write_text(dir / "config.yaml", "name: mine\n");
  const auto other = testing::run_command(redeploy("--start lcm --out " + (dir / "config.yaml")));
  CHECK(other.exit_code == 2);
  CHECK(other.output.find("holds a file that is not a policy file") != std::string::npos);
  CHECK(testing::read_text(dir / "config.yaml") == "name: mine\n");
}
