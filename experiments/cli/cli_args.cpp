#include "experiments/cli/cli_args.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "common/number_text.hpp"

namespace experiments {

const std::string& ArgCursor::value() {
  if (!given_.insert(arg()).second) throw UsageError(arg() + " is given twice: give it once");
  return next_value();
}

const std::string& ArgCursor::repeatable_value() { return next_value(); }

const std::string& ArgCursor::next_value() {
  const std::string& flag = arg();
  if (index_ + 1 >= args_.size()) throw UsageError(flag + " needs a value");
  // `--out --quiet` is a forgotten value, not a folder named "--quiet" (a negative number's one
  // '-' is a value).
  if (args_[index_ + 1].rfind("--", 0) == 0) throw UsageError(flag + " needs a value, got the flag " + args_[index_ + 1]);
  if (args_[index_ + 1].empty()) throw UsageError(flag + " needs a value, got ''");
  return args_[++index_];
}

namespace {

// What a number on the command line looks like: decimal, as written in the help (2, -0.5, 1e-3).
// std::stod alone also takes " 3", "+2", "0x10" and "inf", which no flag means.
bool decimal_spelling(const std::string& text, bool whole) {
  std::size_t i = text.size() > 1 && text[0] == '-' ? 1 : 0;
  bool digits = false, point = false, exponent = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !whole && !point && !exponent) {
      point = true;
    } else if ((c == 'e' || c == 'E') && !whole && digits && !exponent) {
      exponent = true;
      digits = false;  // the exponent needs its own
      if (i + 1 < text.size() && (text[i + 1] == '-' || text[i + 1] == '+')) ++i;
    } else {
      return false;
    }
  }
  return digits;
}

}  // namespace

std::int64_t ArgCursor::integer(std::int64_t min, std::int64_t max) {
  const std::string flag = arg();
  const std::string& text = value();
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!decimal_spelling(text, /*whole=*/true) || used != text.size() || v < min || v > max)
    throw UsageError(flag + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + text + "'");
  return v;
}

std::optional<double> parse_whole_number(const std::string& text) {
  if (!decimal_spelling(text, /*whole=*/false)) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (text.empty() || used != text.size()) return std::nullopt;
  return v;
}

double ArgCursor::number(double min, double max) {
  const std::string flag = arg();
  const std::string& text = value();
  const std::optional<double> v = parse_whole_number(text);
  if (!v || !(*v >= min && *v <= max)) {
    std::ostringstream msg;
    msg << flag << ": expected a number in [" << min << ", " << max << "], got '" << text << "'";
    throw UsageError(msg.str());
  }
  return *v;
}

std::vector<std::uint64_t> parse_seed_list(const std::string& flag, const std::string& value) {
  const auto bad = [&](const std::string& why) { throw UsageError(flag + ": " + why + ", got '" + value + "'"); };
  const auto number = [&](const std::string& text) -> std::uint64_t {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18)
      bad("expected seeds like 1,2,3 or 1-5");
    return std::stoull(text);
  };
  // getline drops an empty last item: "1,2," would read as "1,2".
  if (!value.empty() && value.back() == ',') bad("expected seeds like 1,2,3 or 1-5");
  std::vector<std::uint64_t> seeds;
  std::set<std::uint64_t> seen;
  std::stringstream items(value);
  for (std::string item; std::getline(items, item, ',');) {
    const auto dash = item.find('-');
    const std::uint64_t first = number(item.substr(0, dash)), last = dash == std::string::npos ? first : number(item.substr(dash + 1));
    if (last < first) bad("a range must go up");
    if (last - first >= 1000) bad("at most 1,000 seeds");
    for (std::uint64_t s = first; s <= last; ++s) {
      if (!seen.insert(s).second) bad("seed " + std::to_string(s) + " is listed twice");
      seeds.push_back(s);
    }
  }
  if (seeds.empty() || seeds.size() > 1000) bad("expected between 1 and 1,000 seeds");
  return seeds;
}

namespace {

// A comma-separated list of finite numbers, each > 0 or, with `zero_allowed`, >= 0, and at most `max`.
std::vector<double> parse_number_list(const std::string& flag, const std::string& value, bool zero_allowed, double max) {
  const std::string expected = zero_allowed ? "numbers >= 0 like 0,0.003,0.006" : "numbers > 0 like 1,1.2,1.5";
  std::vector<double> numbers;
  std::stringstream items(value);
  for (std::string item; std::getline(items, item, ',');) {
    const auto number = parse_whole_number(item);
    if (!number || !std::isfinite(*number) || *number < 0 || (*number == 0 && !zero_allowed))
      throw UsageError(flag + ": expected " + expected + ", got '" + value + "'");
    if (*number > max) throw UsageError(flag + ": " + item + " is above " + common::shortest_number_text(max) + ", the largest this flag takes");
    // A grid point twice would run twice and count twice in the pick.
    if (std::find(numbers.begin(), numbers.end(), *number) != numbers.end()) throw UsageError(flag + ": " + item + " is listed twice");
    numbers.push_back(*number);
  }
  if (numbers.empty()) throw UsageError(flag + ": expected " + expected + ", got '" + value + "'");
  return numbers;
}

}  // namespace

std::vector<double> parse_positive_list(const std::string& flag, const std::string& value, double max) {
  return parse_number_list(flag, value, /*zero_allowed=*/false, max);
}

std::vector<double> parse_non_negative_list(const std::string& flag, const std::string& value, double max) {
  return parse_number_list(flag, value, /*zero_allowed=*/true, max);
}

bool read_workload_flag(ArgCursor& arg, WorkloadChange& change) {
  if (arg.is("--epochs")) {
    change.epochs = static_cast<int>(arg.integer(1, 1000000));
  } else if (arg.is("--target")) {
    // An accuracy of 0 is reached before the first round: no time to target to judge.
    const double target = arg.number(0, 1);
    if (!(target > 0)) throw UsageError("--target: expected an accuracy in (0, 1], got '0'");
    change.target_accuracy = target;
  } else {
    return false;
  }
  return true;
}

}  // namespace experiments
