// A network's shape (observation size, hidden widths, actions) compared and named the same way
// wherever a network must be of another's shape: a policy fine-tuned (load_policy_of_shape), a
// soup's ingredients (policy_soup.hpp), the acting copy of a network (acting_network.hpp).
#pragma once

#include <string>

#include "agents/actor_critic.hpp"

namespace agents {

bool same_shape(const ActorCriticSpec& a, const ActorCriticSpec& b);
// "22 observations, hidden [64, 64] and 3 actions"
std::string shape_text(const ActorCriticSpec& spec);

}  // namespace agents
