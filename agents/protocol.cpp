#include "agents/protocol.hpp"

#include <cmath>
#include <cstring>

namespace agents {
namespace {

template <typename T>
void put(std::vector<char>& out, std::size_t offset, T value) {
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

template <typename T>
T get(const char* data, std::size_t offset) {
  T value;
  std::memcpy(&value, data + offset, sizeof(T));
  return value;
}

bool known_type(std::uint16_t t) {
  return t >= static_cast<std::uint16_t>(MessageType::Hello) && t <= static_cast<std::uint16_t>(MessageType::Bye);
}

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::TrainingOver: return "training is over";
    case StopReason::OtherNetwork: return "another network than the server's";
    case StopReason::UnknownAgent: return "the server does not know this agent (it was restarted)";
    case StopReason::ServerStopped: return "the server stopped before training was over";
  }
  return "?";
}

const char* to_string(DropReason reason) {
  switch (reason) {
    case DropReason::None: return "none";
    case DropReason::Malformed: return "malformed";
    case DropReason::Oversized: return "oversized";
    case DropReason::NotFinite: return "not finite";
    case DropReason::Stale: return "stale";
    case DropReason::WrongSize: return "wrong size";
    case DropReason::UnknownAgent: return "unknown agent";
  }
  return "?";
}

std::vector<char> encode(const Message& m) {
  std::vector<char> out(kHeaderBytes + m.values.size() * sizeof(float));
  put<std::uint32_t>(out, 0, kMagic);
  put<std::uint16_t>(out, 4, kProtocolVersion);
  put<std::uint16_t>(out, 6, static_cast<std::uint16_t>(m.type));
  put<std::uint32_t>(out, 8, m.agent_id);
  put<std::uint32_t>(out, 12, 0);
  put<std::uint64_t>(out, 16, m.params_version);
  put<std::uint64_t>(out, 24, m.aux);
  put<std::uint64_t>(out, 32, static_cast<std::uint64_t>(m.values.size()));
  if (!m.values.empty()) std::memcpy(out.data() + kHeaderBytes, m.values.data(), m.values.size() * sizeof(float));
  return out;
}

Decoded decode(const void* data, std::size_t size, std::size_t max_values) {
  Decoded d;
  const char* bytes = static_cast<const char*>(data);
  if (size < kHeaderBytes || get<std::uint32_t>(bytes, 0) != kMagic ||
      get<std::uint16_t>(bytes, 4) != kProtocolVersion || !known_type(get<std::uint16_t>(bytes, 6))) {
    d.drop = DropReason::Malformed;
    return d;
  }
  const std::uint64_t count = get<std::uint64_t>(bytes, 32);
  if (count > max_values) {
    d.drop = DropReason::Oversized;
    return d;
  }
  // count <= max_values, so this product cannot overflow for any sane limit.
  if (size != kHeaderBytes + count * sizeof(float)) {
    d.drop = size > kHeaderBytes + max_values * sizeof(float) ? DropReason::Oversized : DropReason::Malformed;
    return d;
  }
  d.message.type = static_cast<MessageType>(get<std::uint16_t>(bytes, 6));
  d.message.agent_id = get<std::uint32_t>(bytes, 8);
  d.message.params_version = get<std::uint64_t>(bytes, 16);
  d.message.aux = get<std::uint64_t>(bytes, 24);
  d.message.values.resize(static_cast<std::size_t>(count));
  if (count > 0) std::memcpy(d.message.values.data(), bytes + kHeaderBytes, static_cast<std::size_t>(count) * sizeof(float));
  for (float v : d.message.values)
    if (!std::isfinite(v)) {
      d.drop = DropReason::NotFinite;
      return d;
    }
  return d;
}

std::vector<float> episode_values(const EpisodeStats& s) {
  return {static_cast<float>(s.total_reward), static_cast<float>(s.epochs), s.reached_target ? 1.0f : 0.0f,
          std::isfinite(s.time_to_target_ms) ? static_cast<float>(s.time_to_target_ms) : -1.0f,
          static_cast<float>(s.clock_ms)};
}

std::vector<float> episode_values(const std::vector<EpisodeStats>& episodes) {
  std::vector<float> out;
  out.reserve(episodes.size() * kEpisodeValues);
  for (const EpisodeStats& e : episodes) {
    const std::vector<float> one = episode_values(e);
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

namespace {

EpisodeStats episode_at(const float* v) {
  EpisodeStats s;
  s.total_reward = v[0];
  s.epochs = static_cast<int>(v[1]);
  s.reached_target = v[2] > 0.5f;
  if (v[3] >= 0) s.time_to_target_ms = v[3];
  s.clock_ms = v[4];
  return s;
}

}  // namespace

EpisodeStats episode_from_values(const std::vector<float>& v) { return v.size() == kEpisodeValues ? episode_at(v.data()) : EpisodeStats{}; }

// What an agent can send: a whole number of epochs, a 0/1 flag, a time to target >= 0 or the -1 of
// none (and one where the flag says reached), a clock >= 0, a reward of sane size. A peer's values
// outside them (epochs of 3e38: undefined behaviour in the cast) are a malformed message.
bool plausible_episode(const float* v) {
  constexpr float kMaxEpochs = 1e7f, kMaxReward = 1e9f;
  const bool whole_epochs = v[1] >= 0 && v[1] <= kMaxEpochs && v[1] == std::floor(v[1]);
  const bool flag = v[2] == 0.0f || v[2] == 1.0f;
  const bool time = v[3] == -1.0f || v[3] >= 0;
  return whole_epochs && flag && time && !(v[2] == 1.0f && v[3] < 0) && v[4] >= 0 && std::fabs(v[0]) <= kMaxReward;
}

std::vector<EpisodeStats> episodes_from_values(const std::vector<float>& v) {
  std::vector<EpisodeStats> out;
  if (v.empty() || v.size() % kEpisodeValues != 0) return out;
  for (std::size_t i = 0; i < v.size(); i += kEpisodeValues)
    if (!plausible_episode(v.data() + i)) return {};
  for (std::size_t i = 0; i < v.size(); i += kEpisodeValues) out.push_back(episode_at(v.data() + i));
  return out;
}

}  // namespace agents
