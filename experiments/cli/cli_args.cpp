#include "experiments/cli/cli_args.hpp"

namespace experiments {

const std::string& ArgCursor::value() {
  const std::string& flag = arg();
  if (index_ + 1 >= args_.size()) throw UsageError(flag + " needs a value");
  return args_[++index_];
}

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
  if (text.empty() || used != text.size() || v < min || v > max)
    throw UsageError(flag + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + text + "'");
  return v;
}

}  // namespace experiments
