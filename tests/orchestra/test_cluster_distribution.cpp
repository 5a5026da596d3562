#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "orchestra/cluster_distribution.hpp"

using orchestra::ClusterDistribution;
using orchestra::DrawnCluster;

namespace {

ClusterDistribution two_kinds() {
  ClusterDistribution d;
  d.profiles = {{"fast", {12, 0.25}, 512}, {"slow", {20, 0.525}, 384}};
  d.servers = {1, 4};
  d.workers_per_server = {1, 4};
  d.total_workers = {2, 16};
  d.inter_gbps = {1, 100, true};
  d.intra_gbps = {16, 300, true};
  d.message_mb = {10, 500, true};
  d.noise = {0.01, 0.06};
  d.slowdown_probability = 0.5;
  d.cyclic_probability = 0.5;
  return d;
}

double gbps(const env::LinkSpec& link) { return link.bytes_per_ms * 8.0 * 1000.0 / 1e9; }

}  // namespace

TEST_CASE("a drawn cluster is the same for the same seed and within every range") {
  const ClusterDistribution d = two_kinds();
  std::set<int> sizes;
  int slowed = 0, cyclic = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    CAPTURE(seed);
    const DrawnCluster a = orchestra::draw_cluster(d, seed, 256, 60000);
    const DrawnCluster b = orchestra::draw_cluster(d, seed, 256, 60000);
    REQUIRE(a.cluster.num_workers() == b.cluster.num_workers());
    for (int i = 0; i < a.cluster.num_workers(); ++i) {
      const auto& wa = a.cluster.workers[static_cast<std::size_t>(i)];
      const auto& wb = b.cluster.workers[static_cast<std::size_t>(i)];
      CHECK(wa.name == wb.name);
      CHECK(wa.time_model->coefficients() == wb.time_model->coefficients());
      CHECK(wa.noise == wb.noise);
    }
    CHECK(a.network.message_bytes == b.network.message_bytes);
    CHECK(a.cluster.perturbations.size() == b.cluster.perturbations.size());

    const int n = a.cluster.num_workers();
    sizes.insert(n);
    CHECK(n >= 2);
    CHECK(n <= 16);
    CHECK(a.cluster.num_servers() >= 1);
    CHECK(a.cluster.num_servers() <= 4);
    CHECK(n % a.cluster.num_servers() == 0);  // every server holds workers_per_server
    std::set<std::string> names;
    for (const auto& w : a.cluster.workers) {
      names.insert(w.name);
      const auto& c = w.time_model->coefficients();
      CHECK(((c[0] == 12 && c[1] == 0.25) || (c[0] == 20 && c[1] == 0.525)));  // a listed GPU, no jitter
      CHECK(w.noise >= 0.01);
      CHECK(w.noise <= 0.06);
      CHECK(w.server < a.cluster.num_servers());
    }
    CHECK(names.size() == static_cast<std::size_t>(n));
    CHECK(gbps(a.network.inter_server) >= 1 - 1e-9);
    CHECK(gbps(a.network.inter_server) <= 100 + 1e-9);
    CHECK(gbps(a.network.intra_server) >= 16 - 1e-9);
    CHECK(gbps(a.network.intra_server) <= 300 + 1e-9);
    CHECK(a.network.message_bytes >= 10e6 * (1 - 1e-12));
    CHECK(a.network.message_bytes <= 500e6 * (1 + 1e-12));
    CHECK(a.reference_round_s > 0);
    CHECK(a.reference_epoch_s >= a.reference_round_s);
    for (const auto& p : a.cluster.perturbations) {
      CHECK(p.worker >= 0);
      CHECK(p.worker < n);
      CHECK(p.slowdown >= 1.5);
      if (p.period_s > 0) {
        ++cyclic;
        CHECK(p.slowdown <= 3.0);
        CHECK(p.period_s >= 2.0 * a.reference_round_s * (1 - 1e-12));
        CHECK(p.period_s <= 10.0 * a.reference_round_s * (1 + 1e-12));
        CHECK(p.active_s == doctest::Approx(p.period_s / 2));
      } else {
        ++slowed;
        CHECK(p.slowdown <= 4.0);
        CHECK(p.start_s >= 0);
        CHECK(p.start_s <= 1.0 * a.reference_epoch_s * (1 + 1e-12));
        CHECK(p.end_s - p.start_s >= 0.2 * a.reference_epoch_s * (1 - 1e-12));
        CHECK(p.end_s - p.start_s <= 1.5 * a.reference_epoch_s * (1 + 1e-12));
      }
    }
  }
  CHECK(sizes.size() >= 6);  // many cluster sizes are drawn
  CHECK(slowed > 60);        // about half of 200
  CHECK(slowed < 140);
  CHECK(cyclic > 60);
  CHECK(cyclic < 140);
}

TEST_CASE("the reference round is LCM's T* plus the modelled all-reduce") {
  ClusterDistribution d;
  d.profiles = {{"only", {10, 0.0}, 1024}};  // every step 10 ms
  d.servers = {2, 2};
  d.workers_per_server = {1, 1};
  d.total_workers = {2, 2};
  d.inter_gbps = {1, 1};
  d.inter_latency_us = {0, 0};
  d.message_mb = {125, 125};  // 1e9 bits over 1 Gbit/s: 1 s per link transfer
  d.noise = {0, 0};
  d.slowdown_probability = 0;
  d.cyclic_probability = 0;
  const DrawnCluster c = orchestra::draw_cluster(d, 1, 64, 6400);
  // Equal workers: T* = 8 * 10 ms (utilization, M = 8: the spread never grows, so the step cap of
  // 64 bounds it: 640 ms); ring all-reduce of 125 MB over 2 ranks: 2 (N-1)/N * 1 s = 1 s.
  CHECK(c.reference_round_s == doctest::Approx(0.64 + 1.0));
  // 6,400 samples at 64 steps of 32 samples for 2 workers: 4,096 per round, 2 rounds.
  CHECK(c.reference_epoch_s == doctest::Approx(2 * (0.64 + 1.0)));
  CHECK(c.cluster.perturbations.empty());
}

TEST_CASE("drawn GPUs, speed jitter and mixed servers") {
  ClusterDistribution d;
  d.a0_ms = {5, 40, true};
  d.a1_ms = {0.05, 1.0, true};
  d.speed_jitter = {0.9, 1.1};
  d.mixed_servers = 1.0;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const DrawnCluster c = orchestra::draw_cluster(d, seed, 256, 60000);
    for (const auto& w : c.cluster.workers) {
      const auto& k = w.time_model->coefficients();
      CHECK(k[0] >= 5 * 0.9 - 1e-9);
      CHECK(k[0] <= 40 * 1.1 + 1e-9);
      CHECK(k[1] >= 0.05 * 0.9 - 1e-12);
      CHECK(k[1] <= 1.0 * 1.1 + 1e-12);
    }
  }
}

TEST_CASE("equal_workers: the whole cluster one GPU kind at one speed, so LCM's T* is its step cap") {
  ClusterDistribution d = two_kinds();
  d.speed_jitter = {0.9, 1.1};
  d.mixed_servers = 0.5;
  d.equal_workers = 1.0;
  std::set<std::string> kinds;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    CAPTURE(seed);
    const DrawnCluster c = orchestra::draw_cluster(d, seed, 256, 60000);
    const auto& first = c.cluster.workers.front();
    kinds.insert(first.name.substr(first.name.find('.') + 1, first.name.rfind('-') - first.name.find('.') - 1));
    for (const auto& w : c.cluster.workers) {
      CHECK(w.time_model->coefficients() == first.time_model->coefficients());
      CHECK(w.max_batch == first.max_batch);
    }
    // LCM (M = 8, at most 64 steps) on equal steps: no idle to trade, so the cap.
    const int batch = std::min(256 / c.cluster.num_workers(), first.max_batch);
    CHECK(c.reference_barrier_ms == doctest::Approx(64 * first.time_model->eval(batch)));
  }
  CHECK(kinds == std::set<std::string>{"fast", "slow"});  // the kind is still drawn, per cluster

  // Half of the clusters equal, the other half drawn as before (with jitter, never equal).
  d.equal_workers = 0.5;
  int equal = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const DrawnCluster c = orchestra::draw_cluster(d, seed, 256, 60000);
    bool same = true;
    for (const auto& w : c.cluster.workers) same = same && w.time_model->coefficients() == c.cluster.workers.front().time_model->coefficients();
    equal += same && c.cluster.num_workers() > 1;
  }
  CHECK(equal > 70);
  CHECK(equal < 130);
}

TEST_CASE("a distribution that cannot be drawn from is rejected with the field named") {
  ClusterDistribution d = two_kinds();
  d.servers = {3, 2};
  CHECK_THROWS_WITH_AS(orchestra::validate(d), doctest::Contains("servers"), std::invalid_argument);
  d = two_kinds();
  d.total_workers = {40, 50};
  CHECK_THROWS_WITH_AS(orchestra::validate(d), doctest::Contains("total_workers: no draw"), std::invalid_argument);
  d = two_kinds();
  d.message_mb = {0, 10, true};
  CHECK_THROWS_WITH_AS(orchestra::validate(d), doctest::Contains("message_mb"), std::invalid_argument);
  d = two_kinds();
  d.slowdown_probability = 1.5;
  CHECK_THROWS_WITH_AS(orchestra::validate(d), doctest::Contains("slowdown_probability"), std::invalid_argument);
  d = two_kinds();
  d.slowdown = {0.5, 2};
  CHECK_THROWS_WITH_AS(orchestra::validate(d), doctest::Contains("slowdown"), std::invalid_argument);
  d = two_kinds();
  d.profiles[1].coefficients.clear();
  CHECK_THROWS_WITH_AS(orchestra::validate(d), doctest::Contains("profiles[1]"), std::invalid_argument);
  d = two_kinds();
  d.equal_workers = 1.5;
  CHECK_THROWS_WITH_AS(orchestra::validate(d), doctest::Contains("equal_workers"), std::invalid_argument);
}
