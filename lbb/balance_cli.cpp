#include "common/limits.hpp"
#include "lbb/balance_cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lbb/min_max_solver.hpp"
#include "lbb/straggler_effect.hpp"

namespace lbb {
namespace {

using nlohmann::json;

// Samples and max_batch are bounded as in a config: a batch of 1e300 once overflowed an int cast
// (found by fuzz/fuzz_balance, regression in test_balance_cli.cpp).
constexpr double kLargestBatch = static_cast<double>(common::kMaxBatch);

// Builds errors that start with the file and the key.
class Context {
 public:
  explicit Context(const std::string& source) : source_(source) {}
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw BalanceInputError(source_ + ": " + key + ": " + what);
  }
  [[noreturn]] void expected(const std::string& key, const std::string& what, const json& got) const {
    fail(key, "expected " + what + ", got " + got.dump());
  }

 private:
  std::string source_;
};

int positive_int(const Context& ctx, const std::string& key, const json& value) {
  const std::string what = "a positive integer";
  if (!value.is_number_integer()) ctx.expected(key, what, value);
  const auto v = value.get<std::int64_t>();
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<int>::max()})
    ctx.expected(key, what + " up to " + std::to_string(std::numeric_limits<int>::max()), value);
  if (v <= 0 || v > std::numeric_limits<int>::max()) ctx.expected(key, what, value);
  return static_cast<int>(v);
}

double finite_number(const Context& ctx, const std::string& key, const json& value) {
  if (!value.is_number()) ctx.expected(key, "a number", value);
  const double v = value.get<double>();
  if (!std::isfinite(v)) ctx.expected(key, "a finite number", value);
  return v;
}

void only_keys(const Context& ctx, const std::string& where, const json& object, const std::set<std::string>& allowed) {
  for (const auto& item : object.items()) {
    if (allowed.count(item.key())) continue;
    std::string list;
    for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
    ctx.fail(where.empty() ? item.key() : where + "." + item.key(), "unknown key (expected one of " + list + ")");
  }
}

// `fitted`: the coefficients were fitted to samples given with them (what `orchestra profile`
// writes); like a config's `points:` such a fit may turn down a little, which the envelope absorbs.
env::BatchTimeModel model_from_coefficients(const Context& ctx, const std::string& key, const json& value,
                                            double valid_up_to, bool fitted) {
  if (!value.is_array() || value.empty() || value.size() > 4)
    ctx.expected(key, "a list of 1 to 4 coefficients [a0, a1, a2, a3] in ms", value);
  std::vector<double> coefficients;
  for (std::size_t k = 0; k < value.size(); ++k)
    coefficients.push_back(finite_number(ctx, key + "[" + std::to_string(k) + "]", value[k]));
  env::BatchTimeModel model(coefficients, valid_up_to);
  // The checks the config reader makes of a worker's `coefficients`: a falling or absurd model was
  // solved here as given (a 16M split predicted at 148 s where the model said 3.6e9 ms).
  if (const std::string problem = fitted ? "" : env::given_model_problem(model, static_cast<int>(valid_up_to)); !problem.empty())
    ctx.fail(key, problem);
  return model;
}

std::vector<env::BatchTimePoint> parse_samples(const Context& ctx, const std::string& key, const json& value) {
  if (!value.is_array() || value.empty()) ctx.expected(key, "a non-empty list of [batch, ms] pairs", value);
  std::vector<env::BatchTimePoint> points;
  for (std::size_t k = 0; k < value.size(); ++k) {
    const std::string at = key + "[" + std::to_string(k) + "]";
    const json& pair = value[k];
    if (!pair.is_array() || pair.size() != 2) ctx.expected(at, "a [batch, ms] pair", pair);
    // The bounds of a config's `points:` (a time may be 0 here: `orchestra profile` rounds).
    const double batch = finite_number(ctx, at + "[0]", pair[0]);
    const double ms = finite_number(ctx, at + "[1]", pair[1]);
    if (!(batch >= 1 && batch <= kLargestBatch))
      ctx.expected(at + "[0]", "a batch size >= 1 and <= " + std::to_string(common::kMaxBatch), pair[0]);
    if (!(ms >= 0 && ms <= common::kStepMs.max))
      ctx.expected(at + "[1]", "a time >= 0 and <= " + std::to_string(static_cast<long long>(common::kStepMs.max)) + " ms", pair[1]);
    points.push_back({batch, ms});
  }
  return points;
}

double largest_batch(const std::vector<env::BatchTimePoint>& points) {
  double largest = 0;
  for (const auto& p : points) largest = std::max(largest, p.batch);
  return largest;
}

env::BatchTimeModel model_from_samples(const Context& ctx, const std::string& key, const json& value) {
  const std::vector<env::BatchTimePoint> points = parse_samples(ctx, key, value);
  std::set<double> batches;
  for (const auto& p : points) batches.insert(p.batch);
  if (batches.size() < 2)
    ctx.fail(key, "need at least 2 distinct batch sizes to fit a model, got " + std::to_string(batches.size()));
  try {
    return env::BatchTimeModel::fit(points, 3);
  } catch (const std::invalid_argument& e) {
    ctx.fail(key, std::string("cannot fit a model: ") + e.what());
  }
}

BalanceWorker parse_worker(const Context& ctx, const std::string& key, const json& value, int global_batch) {
  if (!value.is_object()) ctx.expected(key, "an object with model or samples", value);
  only_keys(ctx, key, value, {"name", "model", "samples", "max_batch"});
  BalanceWorker worker;
  if (value.contains("name")) {
    if (!value["name"].is_string()) ctx.expected(key + ".name", "a string", value["name"]);
    worker.name = value["name"].get<std::string>();
  }
  const bool has_model = value.contains("model"), has_samples = value.contains("samples");
  if (!has_model && !has_samples) ctx.fail(key, "missing model (coefficients) or samples");
  if (value.contains("max_batch")) {
    worker.max_batch = positive_int(ctx, key + ".max_batch", value["max_batch"]);
    if (worker.max_batch > common::kMaxBatch)
      ctx.expected(key + ".max_batch", "a positive integer up to " + std::to_string(common::kMaxBatch), value["max_batch"]);
  }
  if (has_model) {
    // With both (what `orchestra profile` writes), the model is what was fitted to the samples:
    // it is used as given, the samples are checked and give the default max_batch.
    if (has_samples) {
      const std::vector<env::BatchTimePoint> points = parse_samples(ctx, key + ".samples", value["samples"]);
      if (worker.max_batch == 0) worker.max_batch = static_cast<int>(std::floor(largest_batch(points)));
    }
    if (worker.max_batch == 0) worker.max_batch = static_cast<int>(std::min<std::int64_t>(global_batch, common::kMaxBatch));
    worker.model = model_from_coefficients(ctx, key + ".model", value["model"], worker.max_batch, has_samples);
  } else {
    worker.model = model_from_samples(ctx, key + ".samples", value["samples"]);
    if (worker.max_batch == 0) worker.max_batch = static_cast<int>(std::floor(worker.model.valid_up_to()));
  }
  const std::string source = key + (has_model ? ".model" : ".samples");
  for (int b : {1, worker.max_batch}) {
    const double t = worker.model.eval(b);
    if (!std::isfinite(t) || t < 0)
      ctx.fail(source, "predicts " + std::to_string(t) + " ms at batch " + std::to_string(b) + "; times must be >= 0");
  }
  if (const std::string problem = env::step_time_limit_problem(worker.model.eval(worker.max_batch), worker.max_batch); !problem.empty())
    ctx.fail(source, problem);
  return worker;
}

}  // namespace

BalanceRequest parse_balance_request(const std::string& text, const std::string& source) {
  const Context ctx(source);
  json doc;
  // nlohmann keeps the last of a key given twice: the first value would be dropped without a word,
  // so the parser's key events are checked against the keys of the object they are in.
  std::vector<std::set<std::string>> keys;
  const json::parser_callback_t no_key_twice = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      throw BalanceInputError(source + ": invalid JSON: the key \"" + parsed.get<std::string>() + "\" given twice in one object");
    return true;
  };
  try {
    doc = json::parse(text, no_key_twice);
  } catch (const json::parse_error& e) {
    // nlohmann's text reads "[json.exception.parse_error.101] parse error at line L, column C: why";
    // keep its line, column and reason behind our byte position (counted from 1, as it counts).
    const std::string what = e.what();
    const std::string marker = "parse error at ";
    const auto at = what.find(marker);
    throw BalanceInputError(source + ": invalid JSON at byte " + std::to_string(e.byte) + ", " +
                            (at == std::string::npos ? what : what.substr(at + marker.size())));
  } catch (const json::exception& e) {
    // Well-formed text the library still refuses, e.g. a number out of a double's range (found by
    // fuzz/fuzz_balance; regression test in tests/test_balance_cli.cpp).
    throw BalanceInputError(source + ": invalid JSON: " + e.what());
  }
  if (!doc.is_object()) ctx.expected("(top level)", "an object with global_batch and workers", doc);
  only_keys(ctx, "", doc, {"global_batch", "workers"});
  if (!doc.contains("global_batch")) ctx.fail("global_batch", "missing (the global batch B, a positive integer)");
  if (!doc.contains("workers")) ctx.fail("workers", "missing (a list of workers)");
  BalanceRequest request;
  request.global_batch = positive_int(ctx, "global_batch", doc["global_batch"]);
  const json& workers = doc["workers"];
  if (!workers.is_array() || workers.empty()) ctx.expected("workers", "a non-empty list of workers", workers);
  std::int64_t capacity = 0;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    request.workers.push_back(
        parse_worker(ctx, "workers[" + std::to_string(i) + "]", workers[i], request.global_batch));
    if (request.workers.back().name.empty()) request.workers.back().name = "worker" + std::to_string(i);
    capacity += request.workers.back().max_batch;
  }
  if (capacity < request.global_batch)
    ctx.fail("workers", "the max_batch values sum to " + std::to_string(capacity) + ", less than global_batch " +
                            std::to_string(request.global_batch) + "; no split fits");
  return request;
}

std::string solve_balance(const BalanceRequest& request) {
  std::vector<env::BatchTimeModel> models;
  std::vector<int> max_batch;
  for (const auto& w : request.workers) models.push_back(w.model), max_batch.push_back(w.max_batch);
  const BatchAllocation allocation = solve_min_max(models, max_batch, request.global_batch);
  nlohmann::ordered_json out;
  out["batch_sizes"] = allocation.batch_sizes;
  out["predicted_ms"] = allocation.predicted_ms;
  out["iteration_ms"] = allocation.iteration_ms;
  out["straggler_effect"] = straggler_effect(allocation.predicted_ms, allocation.batch_sizes);
  return out.dump(2) + "\n";
}

int run_balance(const std::string& path, std::ostream& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw BalanceInputError(path + ": cannot read the balance input: it is a directory");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw BalanceInputError(path + ": cannot read the balance input: " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw BalanceInputError(path + ": cannot read the balance input: " + std::strerror(errno));
  out << solve_balance(parse_balance_request(text.str(), path));
  return 0;
}

}  // namespace lbb
