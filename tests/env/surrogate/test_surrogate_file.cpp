// The surrogate file (env/surrogate/surrogate_file.hpp): a round trip, and every way a file can be
// bad gives one DataError naming the file and the reason.
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "surrogate_fixture.hpp"
#include "test_helpers.hpp"

namespace {

void check_bad(const std::string& text, const std::string& reason) {
  testing::TempDir dir;
  const std::string path = dir / "s.json";
  testing::write_text(path, text);
  CHECK_THROWS_WITH_AS(env::read_surrogate(path), doctest::Contains((path + ": " + reason).c_str()), common::DataError);
}

std::string edited(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = env::surrogate_to_json(testing::noisy_surrogate());
  edit(j);
  return j.dump();
}

}  // namespace

TEST_CASE("surrogate file: what is written reads back the same, with the fit report kept aside") {
  testing::TempDir dir;
  const std::string path = dir / "s.json";
  const env::SurrogateModel m = testing::noisy_surrogate();
  env::write_surrogate(path, m, {{"episodes", 12}});
  const auto back = env::read_surrogate(path);
  CHECK(env::surrogate_to_json(*back) == env::surrogate_to_json(m));
  CHECK(nlohmann::json::parse(testing::read_text(path))["fit"]["episodes"] == 12);
  CHECK(nlohmann::json::parse(testing::read_text(path))["form"] == "progress-noise");
}

TEST_CASE("surrogate file: the digest follows the model's numbers, not its fit report or where it was read") {
  testing::TempDir dir;
  const env::SurrogateModel m = testing::noisy_surrogate();
  const std::string digest = env::surrogate_digest(m);
  CHECK(digest.size() == 16);
  CHECK(digest.find_first_not_of("0123456789abcdef") == std::string::npos);
  env::write_surrogate(dir / "a.json", m, {{"episodes", 12}});
  env::write_surrogate(dir / "b.json", m, {{"episodes", 99}});
  CHECK(env::surrogate_digest(*env::read_surrogate(dir / "a.json")) == digest);
  CHECK(env::surrogate_digest(*env::read_surrogate(dir / "b.json")) == digest);
  env::SurrogateModel refit = m;
  refit.progress.drift_scale *= 1.0000001;
  CHECK(env::surrogate_digest(refit) != digest);
  CHECK(env::surrogate_digest(testing::plain_surrogate()) != digest);
}

TEST_CASE("surrogate file: the barrier's rate k is written and read, a file fitted before it has k = 1") {
  testing::TempDir dir;
  const std::string path = dir / "s.json";
  env::SurrogateModel m = testing::noisy_surrogate();
  m.noise.penalty_speedup = 4;
  env::write_surrogate(path, m, nullptr);
  CHECK(env::read_surrogate(path)->noise.penalty_speedup == 4);
  testing::write_text(path, edited([](nlohmann::json& j) { j["noise"].erase("penalty_speedup"); }));
  CHECK(env::read_surrogate(path)->noise.penalty_speedup == 1);
  check_bad(edited([](nlohmann::json& j) { j["noise"]["penalty_speedup"] = 0; }), "noise.penalty_speedup: expected a number > 0");
}

TEST_CASE("surrogate file: the accuracy's steps gain is written and read, a file without it has none and is written as before") {
  testing::TempDir dir;
  const std::string path = dir / "s.json";
  env::SurrogateModel m = testing::noisy_surrogate();
  env::write_surrogate(path, m, nullptr);
  CHECK_FALSE(nlohmann::json::parse(testing::read_text(path))["accuracy"].contains("steps_gain"));
  CHECK(env::read_surrogate(path)->accuracy.steps_gain == 0);
  m.accuracy.steps_gain = 0.004;
  m.accuracy.steps_reference = 6;
  env::write_surrogate(path, m, nullptr);
  const auto back = env::read_surrogate(path);
  CHECK(back->accuracy.steps_gain == 0.004);
  CHECK(back->accuracy.steps_reference == 6);
  check_bad(edited([](nlohmann::json& j) { j["accuracy"]["steps_gain"] = "x"; }), "accuracy.steps_gain");
}

TEST_CASE("surrogate file: a missing file, a folder, garbage, another format or version, and bad numbers") {
  testing::TempDir dir;
  CHECK_THROWS_WITH_AS(env::read_surrogate(dir / "none.json"), doctest::Contains("none.json: no such surrogate file"), common::DataError);
  CHECK_THROWS_WITH_AS(env::read_surrogate(dir.path.string()), doctest::Contains("is a directory"), common::DataError);
  check_bad("surrogate? no", "not a surrogate file (not valid JSON");
  check_bad(edited([](nlohmann::json& j) { j["format"] = "orchestra-policy"; }), "format: expected \"orchestra-surrogate\"");
  check_bad(edited([](nlohmann::json& j) { j["version"] = 2; }), "version: expected 1, got 2");
  check_bad(edited([](nlohmann::json& j) { j["form"] = "neural"; }), "form: expected \"progress-noise\" or \"sample-clock\"");
  check_bad(edited([](nlohmann::json& j) { j["curve"].erase("exponent"); }), "curve.exponent: missing");
  check_bad(edited([](nlohmann::json& j) { j["noise"]["level"] = "high"; }), "noise.level: expected a number");
  check_bad(edited([](nlohmann::json& j) { j["task"].erase("model"); }), "task.model: missing");
  // 2^32 + 256 wrapped to 256 in an int and matched a config's batch of 256.
  check_bad(edited([](nlohmann::json& j) { j["task"]["global_batch"] = 4294967552LL; }), "task.global_batch: expected at most 2^30, got 4294967552");
  check_bad(edited([](nlohmann::json& j) { j["noise"]["unrecovered"] = 2; }), "noise.unrecovered: expected a number in [0, 1]");
  // JSON has no NaN or infinity; a number too large for a double is refused with the rest.
  std::string infinite = edited([](nlohmann::json& j) { j["curve"]["exponent"] = 12345; });
  infinite.replace(infinite.find("12345"), 5, "1e999");
  check_bad(infinite, "not a surrogate file (not valid JSON: [json.exception.out_of_range.406] number overflow");
  check_bad(edited([](nlohmann::json& j) { j["curve"]["exponent"] = nullptr; }), "curve.exponent: expected a number");
  // A number out of its range is printed as written, not in 309 digits.
  check_bad(edited([](nlohmann::json& j) { j["curve"]["floor_loss"] = 1e308; }), "curve.floor_loss: expected a number below curve.initial_loss, got 1e+308");
  check_bad(edited([](nlohmann::json& j) { j["curve"]["exponent"] = -2.5e-7; }), "curve.exponent: expected a number > 0, got -2.5e-07");
}
