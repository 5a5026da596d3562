// The lines after the comparison table: who wins and why, checked by hand on results whose shares
// of time are chosen (compute = utilization, idle = mean idle / clock, communication = the rounds'
// comm over the clock), for every kind of outcome: the reference beaten, the reference winning,
// nothing reaching the target, a timing-only run, a single policy, and over seeds.
#include <doctest/doctest.h>

#include <string>

#include "experiments/analysis/explanation.hpp"
#include "experiments/analysis/time_shares.hpp"
#include "test_helpers.hpp"

using namespace experiments;

namespace {

// A policy with a 100 s clock: compute `compute`, idle `idle`, and 10 rounds of `comm_ms_per_round`
// each (so communication is comm_ms_per_round / 10,000 of the time).
PolicyResults policy(const testing::TempDir& dir, const std::string& label, std::optional<double> ttt, double compute, double idle,
                     double comm_ms_per_round) {
  PolicyResults p;
  p.label = label;
  p.policy = label;
  p.dir = dir / label;
  p.target_accuracy = 0.85;
  p.time_to_target_s = ttt;
  p.final_accuracy = ttt ? 0.86 : 0.80;
  p.sim_time_s = 100;
  p.epochs = 4;
  p.mean_utilization = compute;
  p.idle_s_per_worker = {100 * idle - 10, 100 * idle + 10};
  std::string csv = "round,epoch,worker,batch_size,local_steps,compute_ms,idle_ms,comm_ms,round_ms,clock_ms,straggler_effect,barrier_ms\n";
  for (int r = 1; r <= 10; ++r)
    for (const char* w : {"a", "b"})
      csv += std::to_string(r) + ",0," + w + ",32,1,100,0," + std::to_string(comm_ms_per_round) + ",1000," + std::to_string(r * 1000) + ",0,0\n";
  p.rounds_csv = dir / (label + ".rounds.csv");
  testing::write_text(p.rounds_csv, csv);
  return p;
}

RunResults run_of(std::vector<PolicyResults> policies) {
  RunResults run;
  run.name = "exp";
  run.policies = std::move(policies);
  return run;
}

}  // namespace

TEST_CASE("time shares: compute is the utilization, idle the mean idle over the clock, communication the rounds' comm over it") {
  testing::TempDir dir;
  const TimeShares s = time_shares(policy(dir, "x", 50.0, 0.5, 0.3, 1500));
  CHECK(s.compute == doctest::Approx(0.5));
  CHECK(s.idle == doctest::Approx(0.3));
  CHECK(s.comm == doctest::Approx(0.15));
  CHECK(s.other == doctest::Approx(0.05));
  CHECK(s.comm_known);
  PolicyResults no_rounds = policy(dir, "y", 50.0, 0.5, 0.3, 0);
  no_rounds.rounds_csv.clear();
  CHECK_FALSE(time_shares(no_rounds).comm_known);
}

TEST_CASE("explanation: the winner against the reference, and who is better on each cost") {
  testing::TempDir dir;
  // dsgd: slow and wasteful; lbb: no idle but all communication; local-sgd: little communication
  // but idle; orchestra-lcm: both low, and first.
  const RunResults run = run_of({policy(dir, "dsgd", 120.0, 0.3, 0.3, 4000), policy(dir, "lbb", 90.0, 0.4, 0.02, 5800),
                                 policy(dir, "local-sgd", 80.0, 0.5, 0.45, 500), policy(dir, "orchestra-lcm", 40.0, 0.8, 0.1, 900)});
  const Explanation e = explain_run(run);
  CHECK(e.result == "orchestra-lcm reaches 85.0% first, in 40.0 s: 3.00x faster than dsgd (120.0 s).");
  CHECK(e.why ==
        "Why: orchestra-lcm's workers compute 80% of the time (dsgd: 30%), are idle 10% (30%) and communicate 9% (40%); "
        "lbb is less idle (2%) but communicates 58%; local-sgd communicates less (5%) but is idle 45%.");
}

TEST_CASE("explanation: a winner best on both costs says so, and the reference winning is compared with the runner-up") {
  testing::TempDir dir;
  Explanation e = explain_run(run_of({policy(dir, "dsgd", 120.0, 0.3, 0.3, 4000), policy(dir, "orchestra-lcm", 40.0, 0.8, 0.1, 900)}));
  CHECK(e.why == "Why: orchestra-lcm's workers compute 80% of the time (dsgd: 30%), are idle 10% (30%) and communicate 9% (40%); "
                 "no policy is less idle or communicates less.");
  // On a fast link dsgd can win: then the next one is the comparison, and the line still holds.
  e = explain_run(run_of({policy(dir, "dsgd", 30.0, 0.9, 0.05, 300), policy(dir, "lbb", 45.0, 0.85, 0.01, 400),
                          policy(dir, "local-sgd", 60.0, 0.7, 0.2, 100)}));
  CHECK(e.result == "dsgd reaches 85.0% first, in 30.0 s; the next, lbb, takes 1.50x as long.");
  CHECK(e.why == "Why: dsgd's workers compute 90% of the time (lbb: 85%), are idle 5% (1%) and communicate 3% (4%); "
                 "lbb is less idle (1%) but communicates 4%; local-sgd communicates less (1%) but is idle 20%.");
}

TEST_CASE("explanation: a reference that misses the target, nothing reaching it, timing only, one policy") {
  testing::TempDir dir;
  Explanation e = explain_run(run_of({policy(dir, "dsgd", std::nullopt, 0.3, 0.3, 4000), policy(dir, "lbb", 70.0, 0.4, 0.02, 5800)}));
  CHECK(e.result == "lbb reaches 85.0% first, in 70.0 s; dsgd does not reach it within the budget.");

  e = explain_run(run_of({policy(dir, "dsgd", std::nullopt, 0.3, 0.3, 4000), policy(dir, "lbb", std::nullopt, 0.4, 0.02, 5800)}));
  CHECK(e.result == "No policy reaches 85.0% within the budget; the most accurate is dsgd (80.0%).");
  CHECK(e.why.rfind("Why: dsgd's workers compute 30% of the time", 0) == 0);

  RunResults timing = run_of({policy(dir, "dsgd", std::nullopt, 0.3, 0.3, 4000), policy(dir, "local-sgd", std::nullopt, 0.6, 0.3, 500)});
  timing.policies[0].timing_only = timing.policies[1].timing_only = true;
  timing.policies[1].sim_time_s = 50;  // 12.5 s per epoch against dsgd's 25 s
  e = explain_run(timing);
  CHECK(e.result == "local-sgd has the shortest epochs, 12.5 s each: 2.00x faster than dsgd (25.0 s).");

  // Without rounds.csv: communication and profiling together, as what is left.
  RunResults no_rounds = run_of({policy(dir, "dsgd", 60.0, 0.3, 0.3, 4000), policy(dir, "local-sgd", 40.0, 0.6, 0.35, 500)});
  for (auto& p : no_rounds.policies) p.rounds_csv.clear();
  e = explain_run(no_rounds);
  CHECK(e.why == "Why: local-sgd's workers compute 60% of the time (dsgd: 30%), are idle 35% (30%) and spend 5% (40%) communicating or "
                 "profiling; dsgd is less idle (30%).");

  e = explain_run(run_of({policy(dir, "lbb", 70.0, 0.4, 0.02, 5800)}));
  CHECK(e.result == "lbb reaches 85.0% first, in 70.0 s; no other policy reaches it.");
  CHECK(e.why == "Why: lbb's workers compute 40% of the time, are idle 2% and communicate 58%.");

  // Differences that vanish in whole percents are not named; a policy less idle and no more
  // communicating is said so with "and".
  e = explain_run(run_of({policy(dir, "dsgd", 60.0, 0.3, 0.3, 4000), policy(dir, "orchestra-lcm", 40.0, 0.8, 0.102, 900),
                          policy(dir, "lbb", 50.0, 0.8, 0.098, 880), policy(dir, "fixed-t", 45.0, 0.8, 0.05, 900)}));
  CHECK(e.why == "Why: orchestra-lcm's workers compute 80% of the time (dsgd: 30%), are idle 10% (30%) and communicate 9% (40%); "
                 "fixed-t is less idle (5%) and communicates 9%.");
  // One policy better on both costs is named once.
  e = explain_run(run_of({policy(dir, "dsgd", 60.0, 0.3, 0.3, 4000), policy(dir, "orchestra-lcm", 40.0, 0.8, 0.1, 900),
                          policy(dir, "fixed-t", 45.0, 0.8, 0.05, 800)}));
  CHECK(e.why == "Why: orchestra-lcm's workers compute 80% of the time (dsgd: 30%), are idle 10% (30%) and communicate 9% (40%); "
                 "fixed-t is less idle (5%) and communicates less (8%).");
}

TEST_CASE("explanation over seeds: the soonest on average among those that always reach the target") {
  SeedRow dsgd, lbb, fast_but_flaky;
  dsgd.label = "dsgd";
  dsgd.seeds = dsgd.reached = 3;
  dsgd.target_accuracy = 0.85;
  dsgd.time_to_target_s = {3, 100, 5, 12.4};
  dsgd.reference = "dsgd";
  lbb = dsgd;
  lbb.label = "lbb";
  lbb.time_to_target_s = {3, 60, 4, 9.9};
  lbb.speedup = {3, 1.67, 0.1, 0.25};
  fast_but_flaky = dsgd;
  fast_but_flaky.label = "flaky";
  fast_but_flaky.reached = 2;
  fast_but_flaky.time_to_target_s = {2, 20, 1, 9};
  CHECK(explain_seeds({dsgd, lbb, fast_but_flaky}) ==
        "Over 3 seeds, lbb reaches 85.0% soonest on average: 60.0 s ± 9.90 s (95% CI), a paired speedup of 1.67x over dsgd.");
  CHECK(explain_seeds({fast_but_flaky}) == "No policy reaches 85.0% in every seed.");
}
