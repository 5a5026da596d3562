#include "agents/a3c_options.hpp"

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "env/errors.hpp"

namespace agents {
namespace {

// The few typed reads the a3c: section needs. agents must not depend on experiments (DESIGN.md:
// experiments -> agents), so this mirrors experiments::YamlReader's messages on plain yaml-cpp.
class SectionReader {
 public:
  SectionReader(const YAML::Node& node, std::string file, std::string path)
      : node_(node), file_(std::move(file)), path_(std::move(path)) {
    if (node_ && !node_.IsNull() && !node_.IsMap()) fail_at(node_, path_, "expected a mapping of keys");
  }

  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
    const YAML::Node v = take(key);
    if (!v || v.IsNull()) return fallback;
    std::int64_t out = 0;
    std::size_t used = 0;
    try {
      out = std::stoll(v.IsScalar() ? v.Scalar() : std::string("x"), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.Scalar().size() || out < min || out > max)
      fail_at(v, key_path(key), "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                                    "], got " + shown(v));
    return out;
  }

  double real(const std::string& key, double fallback, double min, double max, bool min_exclusive = false) {
    const YAML::Node v = take(key);
    if (!v || v.IsNull()) return fallback;
    double out = 0;
    std::size_t used = 0;
    try {
      out = std::stod(v.IsScalar() ? v.Scalar() : std::string("x"), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    const bool below = min_exclusive ? out <= min : out < min;
    if (used == 0 || used != v.Scalar().size() || !std::isfinite(out) || below || out > max)
      fail_at(v, key_path(key), std::string("expected a number in ") + (min_exclusive ? "(" : "[") +
                                    number(min) + ", " + number(max) + "], got " + shown(v));
    return out;
  }

  std::string choice(const std::string& key, const std::string& fallback, const std::set<std::string>& allowed) {
    const YAML::Node v = take(key);
    if (!v || v.IsNull()) return fallback;
    if (!v.IsScalar() || allowed.count(v.Scalar()) == 0) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail_at(v, key_path(key), "expected one of " + list + ", got " + shown(v));
    }
    return v.Scalar();
  }

  std::vector<int> integers(const std::string& key, const std::vector<int>& fallback, int min, int max) {
    const YAML::Node v = take(key);
    if (!v || v.IsNull()) return fallback;
    if (!v.IsSequence() || v.size() == 0) fail_at(v, key_path(key), "expected a non-empty list of integers, got " + shown(v));
    std::vector<int> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string item = key + "[" + std::to_string(i) + "]";
      std::int64_t x = 0;
      std::size_t used = 0;
      try {
        x = std::stoll(v[i].IsScalar() ? v[i].Scalar() : std::string("x"), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != v[i].Scalar().size() || x < min || x > max)
        fail_at(v[i], key_path(item), "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                                          "], got " + shown(v[i]));
      out.push_back(static_cast<int>(x));
    }
    return out;
  }

  void reject_unknown_keys() const {
    if (!node_ || !node_.IsMap()) return;
    for (auto it = node_.begin(); it != node_.end(); ++it)
      if (read_.count(it->first.Scalar()) == 0)
        fail_at(it->first, key_path(it->first.Scalar()), "unknown key (see agents/a3c_options.hpp for the a3c: keys)");
  }

 private:
  YAML::Node take(const std::string& key) {
    read_.insert(key);
    if (!node_ || !node_.IsMap()) return YAML::Node();
    for (auto it = node_.begin(); it != node_.end(); ++it)
      if (it->first.Scalar() == key) return it->second.IsNull() ? YAML::Node() : it->second;
    return YAML::Node();
  }
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  static std::string number(double x) {
    if (x == std::numeric_limits<double>::max()) return "inf";
    std::string s = std::to_string(x);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  static std::string shown(const YAML::Node& v) {
    if (v.IsScalar()) return "'" + v.Scalar() + "'";
    if (v.IsSequence()) return "a list";
    if (v.IsMap()) return "a mapping";
    return "nothing";
  }
  [[noreturn]] void fail_at(const YAML::Node& v, const std::string& key, const std::string& message) const {
    const YAML::Mark mark = v.Mark();
    const std::string where = mark.is_null() ? file_ : file_ + ":" + std::to_string(mark.line + 1);
    throw env::ConfigError(where + ": " + key + ": " + message);
  }

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::set<std::string> read_;
};

constexpr double kHuge = std::numeric_limits<double>::max();
constexpr std::int64_t kBig = std::int64_t{1} << 40;

}  // namespace

A3cOptions read_a3c_options(const YAML::Node& node, const std::string& file, const std::string& path) {
  SectionReader r(node, file, path);
  A3cOptions o;
  o.hidden = r.integers("hidden", o.hidden, 1, 4096);
  o.n_steps = static_cast<int>(r.integer("n_steps", o.n_steps, 1, 10000));
  o.gamma = r.real("gamma", o.gamma, 0.0, 1.0);
  o.entropy_coef = r.real("entropy_coef", o.entropy_coef, 0.0, 100.0);
  o.value_loss_coef = r.real("value_loss_coef", o.value_loss_coef, 0.0, 100.0);
  o.max_grad_norm = r.real("max_grad_norm", o.max_grad_norm, 0.0, kHuge);
  o.optimizer = r.choice("optimizer", "adam", {"adam", "rmsprop"}) == "adam" ? OptimizerKind::Adam : OptimizerKind::RmsProp;
  o.learning_rate = r.real("learning_rate", o.learning_rate, 0.0, 10.0, true);
  o.rmsprop_alpha = r.real("rmsprop_alpha", o.rmsprop_alpha, 0.0, 1.0);
  o.optimizer_eps = r.real("optimizer_eps", o.optimizer_eps, 0.0, 1.0, true);
  o.agents = static_cast<int>(r.integer("agents", o.agents, 1, 1024));
  o.total_updates = r.integer("total_updates", o.total_updates, 1, kBig);
  o.max_staleness = static_cast<int>(r.integer("max_staleness", o.max_staleness, 0, 1 << 30));
  o.checkpoint_every = r.integer("checkpoint_every", o.checkpoint_every, 1, kBig);
  o.log_every = r.integer("log_every", o.log_every, 1, kBig);
  o.stats_window = static_cast<int>(r.integer("stats_window", o.stats_window, 1, 1 << 20));
  o.agent_silence_s = r.real("agent_silence_s", o.agent_silence_s, 0.0, 1e7, true);
  o.idle_timeout_s = r.real("idle_timeout_s", o.idle_timeout_s, 0.0, 1e7, true);
  o.reply_timeout_s = r.real("reply_timeout_s", o.reply_timeout_s, 0.0, 1e7, true);
  o.poll_interval_ms = r.real("poll_interval_ms", o.poll_interval_ms, 1.0, 60000.0);
  o.seed = static_cast<std::uint64_t>(r.integer("seed", static_cast<std::int64_t>(o.seed), 0, kBig));
  r.reject_unknown_keys();
  return o;
}

void validate(const A3cOptions& o) {
  const auto bad = [](const std::string& field, const std::string& expected) {
    throw std::invalid_argument("a3c options: " + field + ": expected " + expected);
  };
  if (o.hidden.empty()) bad("hidden", "at least one layer");
  for (int h : o.hidden)
    if (h < 1) bad("hidden", "positive layer widths");
  if (o.n_steps < 1) bad("n_steps", "an integer >= 1");
  if (!(o.gamma >= 0 && o.gamma <= 1)) bad("gamma", "a number in [0, 1]");
  if (!(o.entropy_coef >= 0)) bad("entropy_coef", "a number >= 0");
  if (!(o.value_loss_coef >= 0)) bad("value_loss_coef", "a number >= 0");
  if (!(o.max_grad_norm >= 0)) bad("max_grad_norm", "a number >= 0");
  if (!(o.learning_rate > 0)) bad("learning_rate", "a number > 0");
  if (o.agents < 1) bad("agents", "an integer >= 1");
  if (o.total_updates < 1) bad("total_updates", "an integer >= 1");
  if (o.max_staleness < 0) bad("max_staleness", "an integer >= 0");
  if (o.checkpoint_every < 1) bad("checkpoint_every", "an integer >= 1");
  if (o.log_every < 1) bad("log_every", "an integer >= 1");
  if (!(o.agent_silence_s > 0 && o.idle_timeout_s > 0 && o.reply_timeout_s > 0 && o.poll_interval_ms > 0))
    bad("timeouts", "positive durations");
}

}  // namespace agents
