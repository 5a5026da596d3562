// A double as the shortest text that reads back to the same double ("0.86", not
// "0.85999999999999999"): what the files we write for people to read (drawn configs, an
// evaluation's evaluate.yaml) hold, exact to the bit.
#pragma once

#include <charconv>
#include <string>

namespace common {

inline std::string shortest_number_text(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

}  // namespace common
