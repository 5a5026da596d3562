// An epoch's tail (issue 41): with the speed-proportional shares and capped fast workers, the slow
// workers' shards can run out first, and the epoch ends with rounds that only some workers take
// part in, averaged among them (often within one server). What the controller makes of them.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "orchestra/barrier_controller.hpp"
#include "orchestra/rl_state.hpp"
#include "controller_fixture.hpp"

using orchestra::BarrierController;
using orchestra::BarrierControllerOptions;
using orchestra::LcmObjective;
using testing::ScriptedAgent;
using testing::two_speed_cluster;

namespace {

env::PlanContext plan_at(std::int64_t round, int epoch, bool epoch_start) { return {round, epoch, epoch_start, 0.0}; }

// A round of 100 ms of work plus comm_ms in which workers 0 .. taking_part - 1 take their planned
// local steps and the rest, their shards used up, take none and wait.
env::RoundReport round_of(const BarrierController& c, std::int64_t index, int taking_part, double comm_ms,
                          bool epoch_end = false) {
  env::RoundReport report;
  report.round = index;
  report.comm_ms = comm_ms;
  report.round_ms = 100 + comm_ms;
  report.epoch_end = epoch_end;
  report.train_loss = 1.0;
  for (int n = 0; n < 4; ++n) {
    const bool in = n < taking_part;
    env::WorkerRoundStats w;
    w.batch_size = in ? c.batch_sizes()[static_cast<std::size_t>(n)] : 0;
    w.local_steps = in ? c.local_steps()[static_cast<std::size_t>(n)] : 0;
    w.samples = w.local_steps * w.batch_size;
    w.compute_ms = w.local_steps * (n == 0 ? 10.0 : 21.0);
    w.idle_ms = in ? 0.0 : 100.0;
    report.workers.push_back(w);
  }
  return report;
}

}  // namespace

TEST_CASE("C is measured on rounds of the whole cluster: a round some workers sat out does not count") {
  // At an epoch's end the slow workers' shards can run out while capped fast workers still hold
  // data: those rounds average among the fast ones (within one server, issue 41's h100_k40_2g:
  // 100 ms where the cluster's all-reduce is 4.8 s). Their comm_ms is not the cluster's C.
  const env::ClusterView view = two_speed_cluster();
  SUBCASE("decisions every round: the window's C is kept through a round of one worker") {
    BarrierControllerOptions options;
    options.lcm_objective = LcmObjective::Utilization;
    options.interval = orchestra::DecisionInterval::Rounds;
    BarrierController c(options);
    c.start(view);
    c.observe_round(round_of(c, 0, 4, 40));
    CHECK(c.comm_ms() == doctest::Approx(40));
    c.observe_round(round_of(c, 1, 1, 2));
    CHECK(c.comm_ms() == doctest::Approx(40));
    c.observe_round(round_of(c, 2, 4, 30));
    CHECK(c.comm_ms() == doctest::Approx(30));
  }
  SUBCASE("one decision an epoch: the epoch's C averages its whole-cluster rounds only") {
    BarrierControllerOptions options;
    options.lcm_objective = LcmObjective::Utilization;
    BarrierController c(options);
    c.start(view);
    c.observe_round(round_of(c, 0, 4, 30));
    c.observe_round(round_of(c, 1, 3, 2));
    env::EpochReport epoch;
    epoch.accuracy = 0.5;
    epoch.worker_steps = {30, 14, 14, 7};
    epoch.worker_busy_ms = {300, 294, 294, 147};
    c.observe_epoch(epoch);
    CHECK(c.comm_ms() == doctest::Approx(30));  // not (30 + 2) / 2
  }
}

TEST_CASE("whole_cluster_windows: an epoch's tail, rounds some workers sit out, neither enters the window nor asks the agent") {
  // Issue 41: at an epoch's end the slow workers' shards run out while capped fast workers still
  // hold data; those rounds average among the fast ones over a cheap link. Read as a window they
  // show the agent idle workers and a cheap all-reduce, which says nothing about the next T.
  for (const bool whole_only : {false, true}) {
    CAPTURE(whole_only);
    auto agent = std::make_shared<ScriptedAgent>();
    agent->action = 0;
    BarrierControllerOptions options;
    options.interval = orchestra::DecisionInterval::Rounds;
    options.whole_cluster_windows = whole_only;
    BarrierController c(options);
    c.set_agent(agent);
    c.start(two_speed_cluster());
    c.plan(plan_at(0, 0, true));
    CHECK(agent->calls == 1);
    c.observe_round(round_of(c, 0, 4, 60));  // the whole cluster: a window, the next round decides
    CHECK(c.decision_point(plan_at(1, 0, false)));
    c.plan(plan_at(1, 0, false));
    CHECK(agent->calls == 2);
    const float comm_share = agent->last_observation[orchestra::StateLayout::kCommShareWindow];
    CHECK(comm_share == doctest::Approx(60.0 / 160));
    const auto tail = round_of(c, 1, 1, 5);  // only the fastest worker still holds data
    CHECK(c.closes_window(tail) == !whole_only);
    c.observe_round(tail);
    CHECK(c.decision_point(plan_at(2, 0, false)) == !whole_only);
    c.plan(plan_at(2, 0, false));
    CHECK(agent->calls == (whole_only ? 2 : 3));
    const auto last = round_of(c, 2, 1, 5, /*epoch_end=*/true);  // the epoch's end closes a window either way
    CHECK(c.closes_window(last));
    c.observe_round(last);
    env::EpochReport epoch;
    epoch.accuracy = 0.5;
    epoch.worker_steps = {4, 1, 1, 1};
    epoch.worker_busy_ms = {40, 21, 21, 21};
    c.observe_epoch(epoch);
    c.plan(plan_at(3, 1, true));
    CHECK(agent->calls == (whole_only ? 3 : 4));
    // The window the agent reads at the epoch's start: round 0 (the tail left out), or the tail's
    // last round (5 ms of communication in a 105 ms round).
    const float read = agent->last_observation[orchestra::StateLayout::kCommShareWindow];
    CHECK(read == doctest::Approx(whole_only ? 60.0 / 160 : 5.0 / 105));
  }
}
