// libFuzzer target: the YAML experiment config loader (experiments::parse_config). Any input must
// either parse or be refused with common::ConfigError, whose message names file:line and the key;
// any other exception (a yaml-cpp conversion error, std::out_of_range, ...) reaches the user as a
// bare "orchestra: error:" line without a position, so it counts as a crash here, as do the
// memory errors and undefined behaviour the sanitizers see.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "experiments/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const experiments::ExperimentConfig config = experiments::parse_config(text, "fuzz.yaml");
    (void)config;
  } catch (const common::ConfigError&) {
  }
  return 0;
}
