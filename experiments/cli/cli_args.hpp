// Walks a subcommand's arguments (`orchestra COMMAND ARGS...`): flags, their values, positionals.
// Every subcommand parses the same way, so wrong input reads the same everywhere:
// "--seed: expected an integer in [0, ...], got 'x'", "--out needs a value".
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "experiments/cli/commands.hpp"
#include "experiments/config/workload_change.hpp"

namespace experiments {

class ArgCursor {
 public:
  explicit ArgCursor(const Args& args) : args_(args) {}

  // Moves to the next argument; false after the last one.
  bool next() { return ++index_ < args_.size(); }
  const std::string& arg() const { return args_[index_]; }
  bool is(const char* flag) const { return arg() == flag; }
  bool is_help() const { return is("-h") || is("--help"); }
  bool is_option() const { return !arg().empty() && arg()[0] == '-'; }

  // The value after the current flag (consumed); UsageError if there is none, or if the flag was
  // given a value before: `--seed 1 ... --seed 2` would otherwise run seed 2 without a word.
  const std::string& value();
  // The same for a flag that collects (`evaluate --also A --also B`): each value is kept, so the
  // flag may come again.
  const std::string& repeatable_value();
  // The value as an integer in [min, max]; UsageError naming the flag otherwise.
  std::int64_t integer(std::int64_t min, std::int64_t max);
  // The value after the current flag as a number in [min, max]; UsageError naming the flag otherwise.
  double number(double min, double max);

 private:
  const std::string& next_value();

  const Args& args_;
  std::size_t index_ = static_cast<std::size_t>(-1);
  std::set<std::string> given_;  // the flags whose value() was read
};

// `text` as a whole as a decimal number (2, -0.5, 1e-3: no spaces, no '+' in front, no hex, no
// inf or nan); nullopt for anything else. The one number parser of the commands' flags.
std::optional<double> parse_whole_number(const std::string& text);

// A list of seeds: "1,2,3", "1-5" or a mix ("1-3,7"); UsageError naming the flag for anything
// else, a seed listed twice, or more than 1,000.
std::vector<std::uint64_t> parse_seed_list(const std::string& flag, const std::string& value);

// A comma-separated list of distinct finite numbers > 0 and at most `max` ("1,1.2,1.5"); UsageError
// naming the flag otherwise (a number listed twice included).
std::vector<double> parse_positive_list(const std::string& flag, const std::string& value, double max);
// The same with numbers >= 0 ("0,0.003,0.006").
std::vector<double> parse_non_negative_list(const std::string& flag, const std::string& value, double max);

// --epochs N (1 ... 1,000,000) or --target A (0 < A <= 1) into `change`: true if the current
// argument was one of them (its value consumed), UsageError naming the flag for a bad value.
bool read_workload_flag(ArgCursor& arg, WorkloadChange& change);

// `value` of `flag` as one of a typed enum's spellings; UsageError "--model: expected mlp, cnn or
// resnet, got 'x'" otherwise.
template <class E>
E parse_option(const std::string& flag, const std::string& value, const std::vector<std::pair<const char*, E>>& spellings) {
  std::string list;
  for (std::size_t i = 0; i < spellings.size(); ++i) {
    if (value == spellings[i].first) return spellings[i].second;
    list += (i == 0 ? "" : i + 1 == spellings.size() ? " or " : ", ") + std::string(spellings[i].first);
  }
  throw UsageError(flag + ": expected " + list + ", got '" + value + "'");
}

}  // namespace experiments
