#include "agents/policy_soup.hpp"

#include <algorithm>
#include <stdexcept>

#include "agents/network_shape.hpp"
#include "common/errors.hpp"

namespace agents {

A3cPolicy average_policies(std::vector<A3cPolicy>& ingredients, const std::vector<std::string>& names) {
  if (ingredients.size() < 2) throw std::invalid_argument("a soup needs at least two policies");
  if (names.size() != ingredients.size()) throw std::invalid_argument("a soup needs one name per policy");
  A3cPolicy& first = ingredients.front();
  const ActorCriticSpec& spec = first.network()->spec();
  for (std::size_t i = 1; i < ingredients.size(); ++i) {
    const ActorCriticSpec& other = ingredients[i].network()->spec();
    if (!same_shape(other, spec))
      throw common::DataError(names[i] + ": its network (" + shape_text(other) + ") is not " + names[0] + "'s (" + shape_text(spec) +
                              "); only networks of one shape can be averaged");
    if (!(ingredients[i].control() == first.control()))
      throw common::DataError(names[i] + ": its moves act on T otherwise than " + names[0] +
                              "'s (the controller entry differs); a soup of them would deploy one controller's moves with another's weights");
  }

  // The mean in double, in one fixed order, so the same files give the same soup bit for bit.
  std::vector<double> sum(flat_parameters(first.network()).size(), 0.0);
  std::int64_t updates = 0;
  for (A3cPolicy& policy : ingredients) {
    const std::vector<float> weights = flat_parameters(policy.network());
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += weights[k];
    updates = std::max(updates, policy.updates());
  }
  std::vector<float> mean(sum.size());
  for (std::size_t k = 0; k < sum.size(); ++k) mean[k] = static_cast<float>(sum[k] / static_cast<double>(ingredients.size()));

  ActorCritic soup(spec);
  set_flat_parameters(soup, mean);
  std::map<std::string, std::string> training = first.training();
  std::string soup_of;
  for (std::size_t i = 0; i < names.size(); ++i) soup_of += (i ? "," : "") + names[i];
  training["soup_of"] = soup_of;
  return A3cPolicy(soup, updates, first.control(), training);
}

}  // namespace agents
