// The messages between the parameter server and its agents, one ZeroMQ frame each (the ROUTER adds
// the sender's identity frame). Layout, little-endian as written by x86-64 and arm64 hosts:
//
//   offset  size  field
//   0       4     magic 0x31433341 ("A3C1" in memory), rejects frames of other programs
//   4       2     protocol version (kProtocolVersion); another version is dropped as malformed
//   6       2     type (MessageType)
//   8       4     agent id (the server's index for the agent; 0 before it has one)
//   12      4     reserved (0)
//   16      8     params version: the server's update counter the values belong to (Params) or were
//                 differentiated at (Gradient); moolib's syncId, so stale gradients can be dropped
//   24      8     aux: Welcome: the agent's seed; Hello: the observation size
//   32      8     count: number of float32 values that follow
//   40      4 n   values: parameters, gradients, or a Hello's/Episode's fixed fields
//
// Decoding never throws and never trusts a count: a frame whose length is not 40 + 4 count, whose
// count exceeds the limit, whose values are not finite, or whose type is unknown comes back as a
// DropReason, which the server counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agents/rollout.hpp"

namespace agents {

inline constexpr std::uint32_t kMagic = 0x31433341;
inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kHeaderBytes = 40;

enum class MessageType : std::uint16_t {
  Hello = 1,     // agent -> server: join; aux = observation size, one value = its parameter count
  Welcome = 2,   // server -> agent: agent id, seed in aux, parameters in values
  Gradient = 3,  // agent -> server: flat gradient computed at params version
  Params = 4,    // server -> agent: the current parameters (the reply to every gradient)
  Episode = 5,   // agent -> server: finished episodes (EpisodeStats as 5 values each, n >= 1 of them), no reply
  Stop = 6,      // server -> agent: leave, or join again; why in aux (StopReason)
  Bye = 7,       // agent -> server: leaving
};

// Why a Stop was sent (its aux; a server before this field sends 0, training over). An agent
// leaves on the first two and joins again on the others: a server restarted with --resume, or
// one that stopped early and is about to be, must not end its agents as if training were done.
enum class StopReason : std::uint64_t {
  TrainingOver = 0,   // the server reached its total updates
  OtherNetwork = 1,   // the Hello's network is not the server's
  UnknownAgent = 2,   // an agent id this server never welcomed on this connection (it was restarted)
  ServerStopped = 3,  // the server stopped before its total updates (Ctrl-C, a scheduler's SIGTERM)
};
const char* to_string(StopReason reason);

struct Message {
  MessageType type = MessageType::Hello;
  std::uint32_t agent_id = 0;
  std::uint64_t params_version = 0;
  std::uint64_t aux = 0;
  std::vector<float> values;
};

enum class DropReason {
  None,
  Malformed,   // too short, wrong magic, wrong version, unknown type, length != header + 4 count
  Oversized,   // count above the limit for its type
  NotFinite,   // NaN or infinity among the values: applying it would ruin the network
  Stale,       // (server) gradient older than max_staleness updates, or from the future
  WrongSize,   // (server) a gradient whose count is not the network's parameter count
  UnknownAgent,  // (server) an agent id the server never welcomed, or one it has written off
};
const char* to_string(DropReason reason);

struct Decoded {
  Message message;
  DropReason drop = DropReason::None;  // None: `message` is valid
};

std::vector<char> encode(const Message& message);
// max_values bounds `count` (the server passes its network's parameter count).
Decoded decode(const void* data, std::size_t size, std::size_t max_values);

// Episode statistics <-> values (5 floats per episode: reward, epochs, reached, time to target
// (NaN allowed only here, encoded as -1), clock), several episodes one after the other.
inline constexpr std::size_t kEpisodeValues = 5;
std::vector<float> episode_values(const EpisodeStats& stats);
std::vector<float> episode_values(const std::vector<EpisodeStats>& episodes);
EpisodeStats episode_from_values(const std::vector<float>& values);  // exactly 5 values
// Empty when the count is 0 or not a multiple of 5, or any episode's values are out of their
// ranges (a malformed message: a negative clock, epochs that are not a whole number, ...).
std::vector<EpisodeStats> episodes_from_values(const std::vector<float>& values);

}  // namespace agents
