#include "agents/network_shape.hpp"

namespace agents {

bool same_shape(const ActorCriticSpec& a, const ActorCriticSpec& b) {
  return a.observation_size == b.observation_size && a.hidden == b.hidden && a.actions == b.actions;
}

std::string shape_text(const ActorCriticSpec& spec) {
  std::string widths;
  for (int h : spec.hidden) widths += (widths.empty() ? "" : ", ") + std::to_string(h);
  return std::to_string(spec.observation_size) + " observations, hidden [" + widths + "] and " + std::to_string(spec.actions) + " actions";
}

}  // namespace agents
