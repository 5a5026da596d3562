// What LBB's coordinator costs per iteration, as a share of the iteration it coordinates. LBB runs
// its decision (Alg. 2: SE, fine- or rapid-tune, with a Eq. 3 solve on a rapid tune) between two
// iterations, so its wall time adds to every iteration unless it is overlapped (Sec. 3.2.4 overlaps
// it with the all-reduce; this measures it as if it were not). The iteration time is the
// simulated one: slowest worker's compute plus the ring all-reduce of ResNet-18's 44.7 MB.
//
// Clusters: LBB's testbed (4 workers, Table 2's models, B = 512) with LBB Sec. 4.4's +50 ms
// disturbance switched on and off on two workers, and 64 and 1,024 workers (B = 8,192 and
// 65,536) with seeded random linear models and periodic 1.5x slowdowns on every 16th worker, so
// rapid tunes (the expensive decisions) happen throughout. Noise 2% per step everywhere.
//
// Wall time is the measure; the thread's CPU time is shown beside its worst case, because on a
// loaded machine the worst wall times are the thread waiting for a core, not LBB working.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "env/sim/simulation.hpp"
#include "lbb/lbb_policy.hpp"

namespace {

struct Case {
  const char* name;
  env::ClusterSpec cluster;
  int global_batch;
  int rounds;
};

struct Result {
  double mean_decision_us = 0, p99_decision_us = 0, max_decision_us = 0;
  double mean_iteration_ms = 0;
  double mean_share = 0;         // mean over rounds of decision / iteration
  double worst_share = 0;        // the largest single-round share
  double max_cpu_us = 0;         // the largest decision in thread CPU time
  double worst_cpu_share = 0;    // the largest single-round share in CPU time
  double rapid_mean_us = 0;      // mean decision time on rounds that rapid-tuned
  double start_ms = 0;           // start(): profiling (simulated probes) and the first solve
  std::int64_t fine = 0, rapid = 0;
};

env::WorkerSpec worker(const std::string& name, std::vector<double> coefficients, int max_batch) {
  env::WorkerSpec w;
  w.name = name;
  w.time_model = std::make_shared<env::BatchTimeModel>(std::move(coefficients), max_batch);
  w.max_batch = max_batch;
  w.noise = 0.02;
  return w;
}

Case testbed() {
  Case c{"testbed (Table 2) + Sec. 4.4 disturbance", {}, 512, 2000};
  c.cluster.server_names = {"lbb-testbed"};
  c.cluster.workers = {worker("gtx1070-a", {5.89, 0.5931}, 1024), worker("gtx1070-b", {7.15, 0.5808}, 1024),
                       worker("tesla-m40", {8.29, 0.6023}, 2048), worker("gtx750", {50.98, 2.6714}, 256)};
  // +50 ms, 30 s on and 30 s off, on the M40 and (out of phase) on the GTX 750.
  env::Perturbation p;
  p.add_ms = 50.0;
  p.period_s = 60.0;
  p.active_s = 30.0;
  p.worker = 2;
  p.start_s = 20.0;
  c.cluster.perturbations.push_back(p);
  p.worker = 3;
  p.start_s = 50.0;
  c.cluster.perturbations.push_back(p);
  return c;
}

Case large(int workers, int global_batch, int rounds) {
  Case c{workers == 64 ? "64 workers, random linear models" : "1,024 workers, random linear models", {}, global_batch, rounds};
  c.cluster.server_names = {"server0"};
  std::mt19937 rng(777u + static_cast<unsigned>(workers));
  std::uniform_real_distribution<double> a0(5.0, 50.0), a1(0.2, 3.0);
  const int share = global_batch / workers;
  for (int i = 0; i < workers; ++i)
    c.cluster.workers.push_back(worker("w" + std::to_string(i), {a0(rng), a1(rng)}, 2 * share + (i % 7) * share / 4));
  for (int i = 0; i < workers; i += 16) {
    env::Perturbation p;
    p.worker = i;
    p.slowdown = 1.5;
    p.start_s = 10.0 + (i / 16 % 5) * 7.0;
    p.period_s = 40.0;
    p.active_s = 20.0;
    c.cluster.perturbations.push_back(p);
  }
  return c;
}

double thread_cpu_us() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

Result run(const Case& c) {
  env::SimulationSpec spec;
  spec.cluster = c.cluster;
  spec.network.intra_server = {0.01, 31.5e9 / 8.0 / 1000.0};  // PCIe 3.0 x4, as configs/lbb_testbed.yaml
  spec.global_batch = c.global_batch;
  spec.train_samples = static_cast<std::int64_t>(c.global_batch) * (c.rounds + 1);  // one epoch covers the run
  spec.message_bytes = 44.7e6;                                               // ResNet-18
  env::Simulation simulation(spec, 1, nullptr);
  lbb::LbbPolicy policy;
  using clock = std::chrono::steady_clock;

  Result r;
  const auto start = clock::now();
  policy.start(simulation.view());
  r.start_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();

  std::vector<double> us;
  double rapid_us = 0;
  for (int k = 0; k < c.rounds; ++k) {
    env::PlanContext context;
    context.round = simulation.rounds();
    context.epoch_start = !simulation.in_epoch();
    context.clock_ms = simulation.clock_ms();
    const double c0 = thread_cpu_us();
    const auto t0 = clock::now();
    const env::RoundPlan plan = policy.plan(context);
    const auto t1 = clock::now();
    const double c1 = thread_cpu_us();
    const env::RoundReport report = simulation.run_round(plan);
    const double c2 = thread_cpu_us();
    const auto t2 = clock::now();
    policy.observe_round(report);
    const auto t3 = clock::now();
    const double c3 = thread_cpu_us();
    const double decision_us = std::chrono::duration<double, std::micro>((t1 - t0) + (t3 - t2)).count();
    const double cpu_us = (c1 - c0) + (c3 - c2);
    r.max_cpu_us = std::max(r.max_cpu_us, cpu_us);
    r.worst_cpu_share = std::max(r.worst_cpu_share, cpu_us / 1000.0 / report.round_ms);
    us.push_back(decision_us);
    const double share = decision_us / 1000.0 / report.round_ms;
    r.mean_iteration_ms += report.round_ms;
    r.mean_share += share;
    r.worst_share = std::max(r.worst_share, share);
    if (policy.last_tune().action == lbb::TuneAction::Rapid) rapid_us += decision_us;
  }
  r.fine = policy.stats().fine_tunes;
  r.rapid = policy.stats().rapid_tunes;
  r.rapid_mean_us = r.rapid > 0 ? rapid_us / static_cast<double>(r.rapid) : 0.0;
  r.mean_iteration_ms /= c.rounds;
  r.mean_share /= c.rounds;
  double sum = 0;
  for (double u : us) sum += u;
  r.mean_decision_us = sum / static_cast<double>(us.size());
  std::sort(us.begin(), us.end());
  r.p99_decision_us = us[us.size() * 99 / 100];
  r.max_decision_us = us.back();
  return r;
}

}  // namespace

int main() {
  const std::vector<Case> cases = {testbed(), large(64, 8192, 1000), large(1024, 65536, 300)};
  std::printf("LBB decision cost (LbbPolicy::plan + observe_round, wall time) per simulated iteration\n\n");
  std::printf("| cluster | B | rounds | fine | rapid | mean us | p99 us | max us | max CPU us | rapid-tune mean us | iteration ms | mean share | worst share | worst share (CPU) | start() ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Case& c : cases) {
    const Result r = run(c);
    std::printf("| %s | %d | %d | %lld | %lld | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %.5f%% | %.4f%% | %.4f%% | %.2f |\n",
                c.name, c.global_batch, c.rounds, static_cast<long long>(r.fine), static_cast<long long>(r.rapid),
                r.mean_decision_us, r.p99_decision_us, r.max_decision_us, r.max_cpu_us, r.rapid_mean_us,
                r.mean_iteration_ms, 100.0 * r.mean_share, 100.0 * r.worst_share, 100.0 * r.worst_cpu_share, r.start_ms);
  }
  return 0;
}
