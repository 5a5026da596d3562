// What rank 0 tells the other ranks of a real run, and what they report back. Rank 0 runs the
// policy; each control message is broadcast as JSON bytes and carries a sequence number that every
// rank checks, so a rank that fell out of step fails at once with a common::ProtocolError rather than
// training on someone else's plan.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "env/real/communicator.hpp"
#include "common/errors.hpp"
#include "env/real/real_worker.hpp"
#include "env/round_plan.hpp"

namespace env {

enum class ControlKind {
  Round,      // run `plan` as round `round`
  Probe,      // every rank times one step of `probe_batch` samples (LBB Alg. 1)
  Resume,     // rank 0 broadcasts checkpointed weights; continue at epoch `epoch`, round `round`
  EndPolicy,  // this policy's run is over; the next policy of the config starts
  Abort,      // rank 0 failed (`reason`); every rank stops with that message
};

struct ControlMessage {
  ControlKind kind = ControlKind::Round;
  std::int64_t seq = 0;      // 0, 1, 2, ... within one policy's run
  std::int64_t round = 0;
  int epoch = 0;
  double clock_ms = 0;       // the run's clock (rank 0) when the message was sent
  env::RoundPlan plan;       // Round
  int probe_batch = 0;       // Probe
  std::string reason;        // Abort
};

std::string encode(const ControlMessage& message);
ControlMessage decode(const std::string& bytes);  // throws ProtocolError

// Broadcast from rank 0; on the other ranks, checks the sequence number. An Abort is returned to
// the caller, which stops.
ControlMessage exchange_control(env::Communicator& comm, const ControlMessage& message, std::int64_t expected_seq);

// Every rank's RealRoundStats, gathered (index = rank); throws common::ProtocolError when a rank reports
// another round than `round`.
std::vector<env::RealRoundStats> gather_stats(env::Communicator& comm, const env::RealRoundStats& mine, std::int64_t round);

// Every rank's probe time in ms, gathered (index = rank).
std::vector<double> gather_probe(env::Communicator& comm, double mine, int batch);

}  // namespace env
