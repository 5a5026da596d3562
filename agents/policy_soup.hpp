// A model soup of barrier policies (Wortsman et al., ICML 2022, "Model soups", Sec. 2: the uniform
// soup): one network whose every weight is the mean of those of several networks fine-tuned from
// the same start. Runs of one training recipe that differ only in their seed land in the same
// basin when they start from one network (the paper's Sec. 3.3: fine-tuned models "often lie in a
// single low error basin"), and their mean can beat each of them on data none was chosen on while
// costing one network at deployment. Networks trained from different random starts do not share a
// basin; their mean is not a policy worth deploying (the caller's choice: nothing here can tell).
#pragma once

#include <string>
#include <vector>

#include "agents/policy_file.hpp"

namespace agents {

// The uniform soup of `ingredients` (at least two), named by `names` (their files, in the same
// order; recorded in the soup's training["soup_of"], comma-separated). Every ingredient must have
// the first one's network shape (observation size, hidden widths, actions) and its controller
// (how actions act on T), else common::DataError naming both files and what differs (fewer than
// two, or not one name each: std::invalid_argument). The soup
// keeps the first ingredient's controller and training record (plus soup_of) and, as its update
// count, the largest of theirs.
A3cPolicy average_policies(std::vector<A3cPolicy>& ingredients, const std::vector<std::string>& names);

}  // namespace agents
