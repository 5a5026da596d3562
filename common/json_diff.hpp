// Which keys of two JSON documents differ, as dotted paths ("training.lr", "model.hidden"): what a
// refusal says when a resumed run or a results folder was made with another config.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace common {

// Keys present in one document only, or with different values; objects are compared key by key,
// anything else (arrays included) as a whole. In key order; empty when the documents are equal.
std::vector<std::string> differing_keys(const nlohmann::json& a, const nlohmann::json& b);

// "training.lr (0.05, now 0.1), model.hidden ([32], now [16])": at most `shown` keys, then "and N more".
std::string describe_differences(const nlohmann::json& before, const nlohmann::json& now, std::size_t shown = 4);

}  // namespace common
