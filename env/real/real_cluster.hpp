// Rank 0's side of a real multi-process run, as a RoundCluster: the one run loop asks it to run a
// round, and it broadcasts the plan, runs its own share like every other rank, gathers the ranks'
// measured times into the same RoundReport and EpochReport the simulator produces, and evaluates.
// The other ranks run follow_policy, which obeys the control messages until EndPolicy.
//
// Its clock is wall time spent training: profiling included, evaluation and result writing
// excluded (the simulator charges them nothing either), so times to accuracy compare.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>

#include "env/real/communicator.hpp"
#include "env/real/control_protocol.hpp"
#include "env/real/real_worker.hpp"
#include "env/round_cluster.hpp"
#include "env/sim/round_rules.hpp"
#include "env/train/dataset.hpp"

namespace env {

// Where a resumed run goes on: after `epochs_done` epochs, `rounds` rounds and `clock_ms`.
struct ResumePoint {
  int epochs_done = 0;
  std::int64_t rounds = 0;
  double clock_ms = 0;
};

struct RealClusterSpec {
  ClusterSpec cluster;
  NetworkSpec network;  // only for the policies' all-reduce estimate (LBB's drop test)
  int global_batch = 512;
};

// Wall time spent training; work run through excluded() is paused out.
class RunClock {
 public:
  explicit RunClock(double offset_ms) : offset_ms_(offset_ms), start_(std::chrono::steady_clock::now()) {}
  double now_ms() const;
  void excluded(const std::function<void()>& work);

 private:
  double offset_ms_;
  std::chrono::steady_clock::time_point start_;
  double paused_ms_ = 0;
};

class RealCluster : public RoundCluster {
 public:
  // With `resume`, every rank first takes rank 0's weights and goes on at its epoch.
  RealCluster(RealClusterSpec spec, RealWorker& worker, Communicator& comm, const Dataset& test,
              const std::optional<ResumePoint>& resume);

  ClockKind clock_kind() const override { return ClockKind::Wall; }
  ClusterView view() override;
  RoundReport run_round(const RoundPlan& plan) override;
  EpochReport finish_epoch() override;
  EvalResult evaluate() override;
  bool in_epoch() const override { return in_epoch_; }
  int epoch() const override { return epoch_; }
  std::int64_t rounds() const override { return round_; }
  double clock_ms() const override { return clock_.now_ms(); }
  double epoch_progress() const override { return worker_.epoch_progress(); }
  void off_the_clock(const std::function<void()>& work) override { clock_.excluded(work); }

  // This policy's run is over: the other ranks return from follow_policy.
  void end();
  // Rank 0 failed: the other ranks stop with `reason` instead of timing out.
  void abort(const std::string& reason);

 private:
  ControlMessage send(ControlMessage message);
  double probe(int rank, int batch);

  RealClusterSpec spec_;
  RealWorker& worker_;
  Communicator& comm_;
  const Dataset& test_;
  RunClock clock_;
  EpochTally tally_;
  std::int64_t seq_ = 0;
  std::int64_t round_ = 0;
  int epoch_ = 0;
  bool in_epoch_ = false;
  // LBB Alg. 1 profiles the workers one after the other; here one request makes every rank time
  // the same batch size at once, as on a real cluster, and the others' answers wait in this cache.
  std::map<std::pair<int, int>, std::deque<double>> probes_;
};

// Every rank but 0: runs rounds and probes as told until EndPolicy; throws common::RunError with
// rank 0's message on Abort.
void follow_policy(RealWorker& worker, Communicator& comm);

}  // namespace env
