// `orchestra balance FILE.json` (lbb::run_balance): good input and every error a user can hit.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "lbb/balance_cli.hpp"

namespace {

// A file in a fresh temporary directory, removed with it.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("lbb_balance_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "models.json").string();
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  std::string dir() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

nlohmann::json balance(const std::string& text) {
  TempFile file(text);
  std::ostringstream out;
  REQUIRE(lbb::run_balance(file.path(), out) == 0);
  return nlohmann::json::parse(out.str());
}

// The error message for `text`, with the temporary path replaced by "FILE".
std::string error_of(const std::string& text) {
  TempFile file(text);
  std::ostringstream out;
  try {
    lbb::run_balance(file.path(), out);
  } catch (const lbb::BalanceInputError& e) {
    std::string message = e.what();
    const auto at = message.find(file.path());
    if (at != std::string::npos) message.replace(at, file.path().size(), "FILE");
    return message;
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("balance: hand-worked models") {
  // t0 = B, t1 = 2B, B = 9: (6, 3), both 6 ms.
  const auto out = balance(R"({"global_batch": 9, "workers": [{"name": "a", "model": [0, 1]}, {"model": [0, 2]}]})");
  CHECK(out["batch_sizes"] == nlohmann::json::array({6, 3}));
  CHECK(out["predicted_ms"][0].get<double>() == doctest::Approx(6.0));
  CHECK(out["predicted_ms"][1].get<double>() == doctest::Approx(6.0));
  CHECK(out["iteration_ms"].get<double>() == doctest::Approx(6.0));
  CHECK(out["straggler_effect"].get<double>() == doctest::Approx(0.0));
}

TEST_CASE("balance: LBB Table 2 with one worker given by profiled samples") {
  // The GTX 750 as profiled points of 51 + 2.671 B: a cubic fit recovers it; max_batch defaults
  // to the largest profiled batch, 256.
  std::string samples;
  for (int b = 2; b <= 256; b *= 2) samples += (samples.empty() ? "" : ", ") + ("[" + std::to_string(b) + ", " + std::to_string(51.0 + 2.671 * b) + "]");
  const auto out = balance(R"({"global_batch": 512, "workers": [
      {"name": "gtx1070-a", "model": [6.6, 0.586], "max_batch": 1024},
      {"name": "gtx1070-b", "model": [6.6, 0.586]},
      {"name": "m40", "model": [8.3, 0.602, 0, 0]},
      {"name": "gtx750", "samples": [)" + samples + "]}]}");
  CHECK(out["batch_sizes"] == nlohmann::json::array({167, 166, 159, 20}));
  CHECK(out["iteration_ms"].get<double>() == doctest::Approx(104.462));
  CHECK(out["predicted_ms"][3].get<double>() == doctest::Approx(104.42).epsilon(1e-6));
  CHECK(out["straggler_effect"].get<double>() == doctest::Approx(0.586 / ((104.462 + 103.876 + 104.018 + 104.42) / 4)));
}

TEST_CASE("balance: a profiled worker with samples and the model fitted to them (orchestra profile)") {
  // The model wins over the samples (these disagree on purpose: fitted, they would give t = B);
  // max_batch defaults to the largest sample, 6, so the model-only worker takes the other 4.
  // t0 = 1 + B/2 on at most 6, t1 = 2B, B = 10: (6, 4) at 4 and 8 ms beats (5, 5) at 3.5 and 10 ms.
  // Without the cap it would be (8, 2) at 5 and 4 ms; fitted from the samples, t0(6) would be 6 ms.
  const auto out = balance(R"({"global_batch": 10, "workers": [
      {"name": "profiled", "samples": [[2, 2], [4, 4], [6, 6]], "model": [1, 0.5]},
      {"model": [0, 2]}]})");
  CHECK(out["batch_sizes"] == nlohmann::json::array({6, 4}));
  CHECK(out["predicted_ms"][0].get<double>() == doctest::Approx(4.0));
  CHECK(out["predicted_ms"][1].get<double>() == doctest::Approx(8.0));
}

TEST_CASE("balance: the output keeps the documented key order") {
  TempFile file(R"({"global_batch": 4, "workers": [{"model": [1, 1]}]})");
  std::ostringstream out;
  lbb::run_balance(file.path(), out);
  const std::string text = out.str();
  CHECK(text.find("batch_sizes") < text.find("predicted_ms"));
  CHECK(text.find("predicted_ms") < text.find("iteration_ms"));
  CHECK(text.find("iteration_ms") < text.find("straggler_effect"));
}

TEST_CASE("balance: unreadable files") {
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(lbb::run_balance("/nonexistent/models.json", out),
                       "/nonexistent/models.json: cannot read the balance input: No such file or directory",
                       lbb::BalanceInputError);
  TempFile file("{}");
  CHECK_THROWS_WITH_AS(lbb::run_balance(file.dir(), out),
                       (file.dir() + ": cannot read the balance input: it is a directory").c_str(), lbb::BalanceInputError);
}

TEST_CASE("balance: invalid JSON names the byte") {
  // The stray '}' is the 35th byte.
  CHECK(error_of(R"({"global_batch": 512, "workers": [}])") ==
        "FILE: invalid JSON at byte 35, line 1, column 35: syntax error while parsing value - unexpected '}'; "
        "expected '[', '{', or a literal");
  CHECK(error_of("{\n  \"global_batch\": 512,\n}").rfind("FILE: invalid JSON at byte 26, line 3, column 1: ", 0) == 0);
  CHECK(error_of("") ==
        "FILE: invalid JSON at byte 1, line 1, column 1: syntax error while parsing value - unexpected end of input; "
        "expected '[', '{', or a literal");
}

TEST_CASE("balance: a key given twice is an input error, at any depth") {
  CHECK(error_of(R"({"global_batch": 10, "global_batch": 20, "workers": []})") ==
        "FILE: invalid JSON: the key \"global_batch\" given twice in one object");
  CHECK(error_of(R"({"global_batch": 10, "workers": [{"model": [1, 2], "model": [3, 4]}]})") ==
        "FILE: invalid JSON: the key \"model\" given twice in one object");
  // the same key in two objects is not twice
  CHECK_NOTHROW(lbb::parse_balance_request(R"({"global_batch": 4, "workers": [{"model": [1, 1]}, {"model": [2, 1]}]})", "m.json"));
}

TEST_CASE("balance: a number out of a double's range is an input error, not a crash (fuzz regression)") {
  CHECK_THROWS_WITH_AS(lbb::parse_balance_request(R"({"global_batch": 512, "workers": [{"model": [1e999]}]})", "m.json"),
                       doctest::Contains("m.json: invalid JSON"), lbb::BalanceInputError);
}

TEST_CASE("balance: a profiled batch too large for an int is an input error (fuzz regression)") {
  CHECK_THROWS_WITH_AS(lbb::parse_balance_request(R"({"global_batch": 8, "workers": [{"samples": [[2, 3], [1e300, 4]]}]})", "h.json"),
                       doctest::Contains("h.json: workers[0].samples[1][0]: expected a batch size >= 1 and <= 16777216, got 1e+300"),
                       lbb::BalanceInputError);
  // max_batch does not make such a sample usable (it was fitted, scaled by 1e300).
  CHECK_THROWS_AS(lbb::parse_balance_request(R"({"global_batch": 8, "workers": [{"samples": [[2, 3], [1e300, 4]], "max_batch": 8}]})", "h.json"),
                  lbb::BalanceInputError);
}

TEST_CASE("balance: refuses the time models a config refuses") {
  // A falling time (10 + 2B - 0.01B^2 peaks at 100): the split favoured the larger batches.
  CHECK(error_of(R"({"global_batch": 512, "workers": [{"model": [10, 2, -0.01]}, {"model": [1, 1]}]})") ==
        "FILE: workers[0].model: the batch time decreases at batch 101 (it must not decrease up to max_batch)");
  CHECK(error_of(R"({"global_batch": 512, "workers": [{"model": [1e200]}]})") ==
        "FILE: workers[0].model: coefficient a0 = 1e+200 is outside [-1e+07, 1e+07] ms");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [0]}]})") ==
        "FILE: workers[0].model: the time of a batch of 1 must be positive");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [1, 1], "max_batch": 16777217}]})") ==
        "FILE: workers[0].max_batch: expected a positive integer up to 16777216, got 16777217");
  CHECK(error_of(R"({"global_batch": 16777216, "workers": [{"model": [1, 1]}]})") ==
        "FILE: workers[0].model: a step of max_batch (16777216) would take 1.67772e+07 ms; a step takes at most 1e+07 ms (2.8 hours)");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"samples": [[2, 3], [4, 2e7]]}]})") ==
        "FILE: workers[0].samples[1][1]: expected a time >= 0 and <= 10000000 ms, got 20000000.0");
  // What `orchestra profile` writes (a model fitted to samples) may turn down a little, as a
  // config's points: may; it is solved on the monotone envelope.
  const auto out = balance(R"({"global_batch": 150, "workers": [{"model": [10, 2, -0.01], "samples": [[1, 12], [150, 85]]},
                                                              {"model": [0, 1], "max_batch": 150}]})");
  CHECK(out["batch_sizes"][0].get<int>() + out["batch_sizes"][1].get<int>() == 150);
}

TEST_CASE("balance: missing and wrong-typed keys") {
  CHECK(error_of("[1, 2]") == "FILE: (top level): expected an object with global_batch and workers, got [1,2]");
  CHECK(error_of(R"({"workers": [{"model": [1]}]})") ==
        "FILE: global_batch: missing (the global batch B, a positive integer)");
  CHECK(error_of(R"({"global_batch": 4})") == "FILE: workers: missing (a list of workers)");
  CHECK(error_of(R"({"global_batch": "512", "workers": [{"model": [1]}]})") ==
        "FILE: global_batch: expected a positive integer, got \"512\"");
  CHECK(error_of(R"({"global_batch": 512.5, "workers": [{"model": [1]}]})") ==
        "FILE: global_batch: expected a positive integer, got 512.5");
  CHECK(error_of(R"({"global_batch": 4, "workers": []})") == "FILE: workers: expected a non-empty list of workers, got []");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [1, 1]}, 7]})") ==
        "FILE: workers[1]: expected an object with model or samples, got 7");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"name": "a"}]})") ==
        "FILE: workers[0]: missing model (coefficients) or samples");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [1], "samples": [[1, 2], [2]]}]})") ==
        "FILE: workers[0].samples[1]: expected a [batch, ms] pair, got [2]");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [1, 1], "max_bacth": 3}]})") ==
        "FILE: workers[0].max_bacth: unknown key (expected one of max_batch, model, name, samples)");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"name": 3, "model": [1]}]})") ==
        "FILE: workers[0].name: expected a string, got 3");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [1, 2, 3, 4, 5]}]})") ==
        "FILE: workers[0].model: expected a list of 1 to 4 coefficients [a0, a1, a2, a3] in ms, got [1,2,3,4,5]");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [1, "x"]}]})") ==
        "FILE: workers[0].model[1]: expected a number, got \"x\"");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"samples": [[2, 3], [4]]}]})") ==
        "FILE: workers[0].samples[1]: expected a [batch, ms] pair, got [4]");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"samples": [[2, 3], [2, 3.5]]}]})") ==
        "FILE: workers[0].samples: need at least 2 distinct batch sizes to fit a model, got 1");
}

TEST_CASE("balance: negative or zero sizes and too little memory") {
  CHECK(error_of(R"({"global_batch": 0, "workers": [{"model": [1]}]})") ==
        "FILE: global_batch: expected a positive integer, got 0");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [1, 1], "max_batch": -3}]})") ==
        "FILE: workers[0].max_batch: expected a positive integer, got -3");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"samples": [[-2, 3], [4, 5]]}]})") ==
        "FILE: workers[0].samples[0][0]: expected a batch size >= 1 and <= 16777216, got -2");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"samples": [[2, -3], [4, 5]]}]})") ==
        "FILE: workers[0].samples[0][1]: expected a time >= 0 and <= 10000000 ms, got -3");
  CHECK(error_of(R"({"global_batch": 4, "workers": [{"model": [-5, 1]}]})") ==
        "FILE: workers[0].model: the time of a batch of 1 must be positive");
  CHECK(error_of(R"({"global_batch": 512, "workers": [{"model": [1, 1], "max_batch": 100},
                                                       {"samples": [[2, 3], [200, 50]]}]})") ==
        "FILE: workers: the max_batch values sum to 300, less than global_batch 512; no split fits");
}
