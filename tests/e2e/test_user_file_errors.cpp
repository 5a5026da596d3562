// A bad file or input a user gives is a typed error from common/errors.hpp, naming the file and the
// reason, with its exit code (2 for bad input, 1 for a failure of the machine or of another
// process): policy files, A3C checkpoints, CURVE key files, real-run checkpoints, the atomic
// writer and reader, and the environment a worker process is started with. Through the functions
// and through the binary, whose one catch prints "orchestra: <kind>: <message>".
#include <doctest/doctest.h>

#include <filesystem>

#include "agents/actor_critic.hpp"
#include "agents/checkpoint.hpp"
#include "agents/curve_keys.hpp"
#include "agents/policy_file.hpp"
#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "env/train/models.hpp"
#include "experiments/runner/real_checkpoint.hpp"
#include "test_helpers.hpp"

namespace {

// The exit code and kind the binary's one catch gives `e`, as `orchestra` would print it.
template <class E>
void check_typed(const E& e, int exit_code, const std::string& kind, const std::string& names) {
  CHECK(e.exit_code() == exit_code);
  CHECK(std::string(e.kind()) == kind);
  CHECK(std::string(e.what()).find(names) != std::string::npos);
}

}  // namespace

TEST_CASE("user files: a damaged A3C checkpoint, a missing one and one of another network are data errors naming the file") {
  testing::TempDir dir;
  agents::ActorCritic net(agents::ActorCriticSpec{6, {4}});
  torch::optim::Adam optimizer(net->parameters());
  const std::string path = dir / "checkpoint.pt";
  try {
    agents::load_checkpoint(path, net, optimizer);
    FAIL("a missing checkpoint loaded");
  } catch (const common::DataError& e) {
    check_typed(e, 2, "data error", path + ": no checkpoint to resume from");
  }
  testing::write_text(path, "not an archive");
  try {
    agents::load_checkpoint(path, net, optimizer);
    FAIL("a damaged checkpoint loaded");
  } catch (const common::DataError& e) {
    check_typed(e, 2, "data error", path + ": not a readable checkpoint");
  }
  agents::save_checkpoint(path, net, optimizer, agents::CheckpointState{});
  agents::ActorCritic other(agents::ActorCriticSpec{7, {4}});
  torch::optim::Adam other_optimizer(other->parameters());
  try {
    agents::load_checkpoint(path, other, other_optimizer);
    FAIL("a checkpoint of another network loaded");
  } catch (const common::DataError& e) {
    check_typed(e, 2, "data error", path + ": the checkpoint's network differs from the config's");
  }
}

TEST_CASE("user files: a CURVE key file that is missing or holds a malformed key is a data error naming the file and the key") {
  testing::TempDir dir;
  CHECK_THROWS_WITH_AS(agents::read_curve_keys(dir / "none"), doctest::Contains((dir / "none: cannot read the key file").c_str()), common::DataError);
  testing::write_text(dir / "keys", "server_public: \"short\"\n");
  CHECK_THROWS_WITH_AS(agents::read_curve_keys(dir / "keys"),
                       doctest::Contains((dir / "keys: server_public: expected a 40-character Z85 key").c_str()), common::DataError);
  // Through the binary: a data error, exit 2, one line.
  const std::string config = dir / "toy.yaml";
  testing::write_text(config, "environment: toy\n");
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " serve " + config + " --keys " + (dir / "keys") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra: data error: " + (dir / "keys") + ": server_public: expected a 40-character Z85 key (write one with orchestra keygen)\n");
}

TEST_CASE("user files: a policy file that is not one is a data error through the binary too") {
  testing::TempDir dir;
  testing::write_text(dir / "junk.pt", "not a policy");
  CHECK_THROWS_AS(agents::A3cPolicy::load(dir / "junk.pt"), common::DataError);
  testing::write_text(dir / "c.yaml", "name: c\ndata: {dataset: synthetic}\ntraining: {epochs: 1}\ncluster:\n"
                                      "  workers:\n    - {name: a, time_model: {coefficients: [1, 0.1]}}\n"
                                      "policies:\n  - {name: orchestra-a3c, policy: " + (dir / "junk.pt") + "}\n");
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "c.yaml") + " --quiet --out " + (dir / "out"));
  CHECK(r.exit_code == 2);
  // The config's file:line and key, then the policy file's own complaint.
  CHECK(r.output.find("c.yaml:8: policies[0].policy: " + (dir / "junk.pt") + ": not a readable policy file") != std::string::npos);
}

TEST_CASE("user files: a real run's damaged checkpoint is a data error naming the file, before anything resumes") {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "checkpoints");
  testing::write_text(dir / "checkpoints/dsgd.json", "{\"version\": 1, \"finished\": tru");
  try {
    experiments::load_checkpoint(dir.path.string(), "dsgd");
    FAIL("a damaged checkpoint loaded");
  } catch (const common::DataError& e) {
    check_typed(e, 2, "data error", dir / "checkpoints/dsgd.json: unreadable checkpoint");
  }
  testing::write_text(dir / "checkpoints/dsgd.json", "{\"version\": 7}");
  CHECK_THROWS_WITH_AS(experiments::load_checkpoint(dir.path.string(), "dsgd"), doctest::Contains("unknown checkpoint version"),
                       common::DataError);
  testing::write_text(dir / "checkpoints/dsgd.pt", "not a model");
  auto model = env::make_model(env::ModelSpec{}, {1, 28, 28}, 10);
  CHECK_THROWS_WITH_AS(experiments::load_checkpoint_model(dir.path.string(), "dsgd", *model),
                       doctest::Contains((dir / "checkpoints/dsgd.pt: cannot load the checkpointed model").c_str()), common::DataError);
  CHECK_FALSE(experiments::load_checkpoint(dir.path.string(), "none").has_value());  // no checkpoint is no error
}

TEST_CASE("user files: the atomic reader's missing file is a data error, the writer's refusal a system error") {
  testing::TempDir dir;
  try {
    common::read_file_bytes(dir / "missing.json");
    FAIL("read a missing file");
  } catch (const common::DataError& e) {
    check_typed(e, 2, "data error", dir / "missing.json: cannot read");
  }
  try {
    common::write_file_atomic(dir / "no/such/folder/out.json", std::string("{}"));
    FAIL("wrote into a missing folder");
  } catch (const common::SystemError& e) {
    check_typed(e, 1, "system error", dir / "no/such/folder/out.json: cannot write");
  }
}

TEST_CASE("user input: a worker process started without orchestra launch's environment is a usage error naming the variable") {
  testing::TempDir dir;
  testing::write_text(dir / "c.yaml", "name: c\n");
  auto r = testing::run_command("env -u RANK " + std::string(ORCHESTRA_BINARY) + " worker " + (dir / "c.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("the environment variable RANK is not set (workers are started by orchestra launch)") != std::string::npos);
  r = testing::run_command("env RANK=0 WORLD_SIZE=1 MASTER_PORT=1 ORCHESTRA_BACKEND=mpi " + std::string(ORCHESTRA_BINARY) + " worker " +
                           (dir / "c.yaml"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("ORCHESTRA_BACKEND=mpi: expected a c10d backend") != std::string::npos);
}
