// What `train --resume` compares: the keys of a training config that decide what is learned. A
// changed learning rate, reward or experiment counts; a longer run, more agents, another name or
// the same experiment under another path does not.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "common/json_diff.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "env/train/workload_task.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/train_config.hpp"
#include "experiments/runner/training_identity.hpp"
#include "controller_task_config.hpp"
#include "test_helpers.hpp"

namespace {

// configs/a3c_general.yaml and its experiment (reading the tests' Fashion-MNIST folder), written
// into `folder` after `change` had its way with the training config.
std::string general_config(const std::filesystem::path& folder, const std::function<void(YAML::Node&)>& change = {}) {
  testing::write_controller_task(folder);
  YAML::Node train = YAML::LoadFile(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/a3c_general.yaml");
  if (change) change(train);
  testing::write_text(folder / "train.yaml", YAML::Dump(train) + "\n");
  return folder / "train.yaml";
}

nlohmann::json identity_of(const std::string& path) { return experiments::load_train_config(path).identity; }

}  // namespace

TEST_CASE("training identity: what is learned counts, how long and by how many does not") {
  testing::TempDir dir;
  const nlohmann::json base = identity_of(general_config(dir / "base"));
  CHECK(base.contains("a3c"));
  CHECK(base["a3c"]["learning_rate"].is_number());
  CHECK(base["experiments"].is_array());
  CHECK(base["experiments"].size() == 1);
  // The same training: a run length, agents, cadence, timeouts, a name, a default spelled out, the
  // same experiment in another folder.
  CHECK(identity_of(general_config(dir / "longer", [](YAML::Node& c) {
          for (const char* key : {"total_updates", "agents", "checkpoint_every", "log_every", "snapshot_every", "idle_timeout_s"})
            c["a3c"][key] = 7;
        })) == base);
  CHECK(identity_of(general_config(dir / "named", [](YAML::Node& c) { c["name"] = "another_name"; })) == base);
  REQUIRE(YAML::LoadFile(dir / "base/train.yaml")["a3c"]["value_loss_coef"].as<double>() == agents::A3cOptions{}.value_loss_coef);
  CHECK(identity_of(general_config(dir / "default", [](YAML::Node& c) { c["a3c"].remove("value_loss_coef"); })) == base);
  CHECK(identity_of(general_config(dir / "elsewhere/deeper")) == base);
  // Another training: the differences name the keys.
  CHECK(common::differing_keys(base, identity_of(general_config(dir / "lr", [](YAML::Node& c) { c["a3c"]["learning_rate"] = 0.01; }))) ==
        std::vector<std::string>{"a3c.learning_rate"});
  CHECK(common::differing_keys(base, identity_of(general_config(dir / "seed", [](YAML::Node& c) { c["a3c"]["seed"] = 77; }))) == std::vector<std::string>{"a3c.seed"});
  CHECK(common::differing_keys(base, identity_of(general_config(dir / "reward", [](YAML::Node& c) { c["reward"] = "log_time"; }))) ==
        std::vector<std::string>{"reward"});
  CHECK(common::differing_keys(base, identity_of(general_config(dir / "move", [](YAML::Node& c) { c["controller"]["factor"] = 4; }))) ==
        std::vector<std::string>{"controller.factor"});
  std::string task = testing::read_text(dir / "base/controller_task.yaml");
  REQUIRE(task.find("\nseed: 11\n") != std::string::npos);
  task.replace(task.find("\nseed: 11\n"), 10, "\nseed: 4242\n");
  testing::write_text(dir / "base/controller_task.yaml", task);
  const auto edited = common::differing_keys(base, identity_of(dir / "base/train.yaml"));
  REQUIRE(edited.size() == 1);
  CHECK(edited[0] == "experiments");  // an edited experiment, though its path is the same
}

TEST_CASE("training identity: a surrogate counts by its content, not its path") {
  testing::TempDir dir;
  // A surrogate of the controller task's workload, as `orchestra surrogate fit` would write one.
  const auto write_surrogate = [](const std::filesystem::path& folder, double scale) {
    testing::write_controller_task(folder);
    const auto task = experiments::load_config(folder / "controller_task.yaml");
    env::SurrogateModel m;
    m.task = env::wanted_task(task.data, task.training, task.global_batch);
    if (m.task.train_samples == 0) m.task.train_samples = 60000;  // the whole data set: any count is read as it
    if (m.task.test_samples == 0) m.task.test_samples = 10000;
    m.accuracy.coefficients = {0.9, -0.3};
    m.curve.scale = scale;
    env::write_surrogate(folder / "fitted/s.json", m);
  };
  const auto on_surrogate = [&](const std::filesystem::path& folder) {
    return identity_of(general_config(folder, [](YAML::Node& c) {
      c["environment"] = "surrogate";
      c["surrogate"] = "fitted/s.json";
    }));
  };
  std::filesystem::create_directories(dir / "a/fitted");
  write_surrogate(dir / "a", 10);
  const nlohmann::json base = on_surrogate(dir / "a");
  CHECK(base["surrogate"] == env::surrogate_digest(*env::read_surrogate(dir / "a/fitted/s.json")));
  std::filesystem::create_directories(dir / "elsewhere/b/fitted");
  write_surrogate(dir / "elsewhere/b", 10);
  CHECK(on_surrogate(dir / "elsewhere/b") == base);  // the same surrogate, read from another folder
  write_surrogate(dir / "a", 20);                        // refit where it was
  CHECK(common::differing_keys(base, on_surrogate(dir / "a")) == std::vector<std::string>{"surrogate"});
}

TEST_CASE("training identity: YAML scalars read as JSON numbers and booleans, so spellings of one value are equal") {
  CHECK(experiments::yaml_as_json(YAML::Load("{a: 0.1, b: 1e-1, c: 3, d: true, e: ~, f: text, g: [1, x]}")) ==
        nlohmann::json{{"a", 0.1}, {"b", 0.1}, {"c", 3}, {"d", true}, {"e", nullptr}, {"f", "text"}, {"g", {1, "x"}}});
}
