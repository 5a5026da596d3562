// `orchestra draw`: clusters drawn from a training distribution, written as experiment configs, read
// back as the very clusters the training environment would draw with the same seed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <string>

#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/drawn_cluster_config.hpp"
#include "experiments/runner/train_config.hpp"
#include "controller_task_config.hpp"
#include "results_fixture.hpp"
#include "test_helpers.hpp"

namespace {

// configs/a3c_general.yaml, with its workload reading the tests' Fashion-MNIST folder (configure's
// ORCHESTRA_TEST_FASHION_MNIST): a draw takes the training set's size from the data, and the shipped
// workload names Debian's folder, which a GPU machine's unpacked copy is not.
const std::string& train_config() {
  static const testing::TempDir dir;
  static const std::string path = [] {
    testing::write_controller_task(dir.path);
    testing::write_text(dir / "a3c_general.yaml", testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/a3c_general.yaml"));
    return dir / "a3c_general.yaml";
  }();
  return path;
}

// Equal up to the rounding of a unit conversion (Gbit/s <-> bytes per ms, us <-> ms).
bool close(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

TEST_CASE("orchestra draw: a drawn cluster written as a config reads back as the same cluster") {
  if (!testing::fashion_mnist_or_skip()) return;
  const experiments::TrainConfig train = experiments::load_train_config(train_config());
  const auto drawn = experiments::draw_cluster_configs(train, 1000, 16);
  REQUIRE(drawn.size() == 16);
  int slowdowns = 0, cyclic = 0, multi_server = 0;
  for (const auto& d : drawn) {
    CAPTURE(d.name);
    CHECK(d.name == "drawn-" + std::to_string(d.seed));
    // The draw is the training environment's: the distribution, the seed, the workload's global
    // batch (256) and its training set (60,000).
    const orchestra::DrawnCluster direct = orchestra::draw_cluster(*train.distribution, d.seed, 256, 60000);
    const experiments::ExperimentConfig back = experiments::parse_config(d.yaml, d.name + ".yaml");
    const env::ClusterSpec& want = direct.cluster;
    const env::ClusterSpec& got = back.cluster;
    CHECK(back.name == d.name);
    CHECK(back.budget.target_accuracy == doctest::Approx(0.84));  // the workload's budget
    REQUIRE(got.num_workers() == want.num_workers());
    CHECK(got.server_names == want.server_names);
    multi_server += want.num_servers() > 1;
    for (int i = 0; i < want.num_workers(); ++i) {
      const auto& g = got.workers[static_cast<std::size_t>(i)];
      const auto& w = want.workers[static_cast<std::size_t>(i)];
      CHECK(g.name == w.name);
      CHECK(g.server == w.server);
      CHECK(g.max_batch == w.max_batch);
      CHECK(g.noise == w.noise);  // exact: written in shortest round-trip form
      CHECK(g.time_model->coefficients() == w.time_model->coefficients());
      CHECK(g.time_model->eval(w.max_batch) == w.time_model->eval(w.max_batch));
    }
    REQUIRE(got.perturbations.size() == want.perturbations.size());
    for (std::size_t k = 0; k < want.perturbations.size(); ++k) {
      const auto& g = got.perturbations[k];
      const auto& w = want.perturbations[k];
      CHECK(g.worker == w.worker);
      CHECK(g.start_s == w.start_s);
      CHECK(g.slowdown == w.slowdown);
      CHECK(g.period_s == w.period_s);
      CHECK(g.active_s == w.active_s);
      // A cyclic disturbance lasts all run: no end_s, which the config reads as "never".
      if (std::isfinite(w.end_s)) CHECK(g.end_s == w.end_s);
      else CHECK(g.end_s > 1e300);
      (w.period_s > 0 ? cyclic : slowdowns)++;
    }
    CHECK(close(back.network.inter_server.bytes_per_ms, direct.network.inter_server.bytes_per_ms));
    CHECK(close(back.network.inter_server.alpha_ms, direct.network.inter_server.alpha_ms));
    CHECK(close(back.network.intra_server.bytes_per_ms, direct.network.intra_server.bytes_per_ms));
    CHECK(close(back.network.intra_server.alpha_ms, direct.network.intra_server.alpha_ms));
    CHECK(close(back.network.message_bytes, direct.network.message_bytes));
  }
  // The 16 draws cover what the round trip must carry: both kinds of perturbation, several servers.
  CHECK(slowdowns > 0);
  CHECK(cyclic > 0);
  CHECK(multi_server > 0);
  // Deterministic in the seed.
  const auto again = experiments::draw_cluster_configs(train, 1000, 2);
  CHECK(again[0].yaml == drawn[0].yaml);
  CHECK(again[1].yaml == drawn[1].yaml);
  CHECK(drawn[0].yaml != drawn[1].yaml);
  // And the same across versions: keys added to the distribution since (equal_workers) draw nothing
  // unless asked for, so a shipped recipe keeps its clusters. Seed 1000's first worker, as drawn
  // when the shipped policies were trained:
  CHECK(drawn[0].yaml.find("{name: s0.m40-0, time_model: {coefficients: [8.089115569059894, 0.587704982779828]}, max_batch: 2048, "
                           "noise: 0.015304225520905285}") != std::string::npos);
}

TEST_CASE("orchestra draw: equal_workers draws clusters of one kind at one speed, and a bad value names the file, line and key") {
  if (!testing::fashion_mnist_or_skip()) return;
  const std::filesystem::path dir = std::filesystem::path(train_config()).parent_path();
  std::string text = testing::read_text(train_config());
  const std::string mixed = "  mixed_servers: 0.2\n";
  const auto at = text.find(mixed);
  REQUIRE(at != std::string::npos);
  std::string equal = text;
  equal.insert(at + mixed.size(), "  equal_workers: 1\n");
  testing::write_text(dir / "equal.yaml", equal);
  const auto drawn = experiments::draw_cluster_configs(experiments::load_train_config(dir / "equal.yaml"), 1000, 8);
  int several = 0;
  for (const auto& d : drawn) {
    const auto& workers = d.cluster.cluster.workers;
    for (const auto& w : workers) CHECK(w.time_model->coefficients() == workers.front().time_model->coefficients());
    several += workers.size() > 1;
  }
  CHECK(several > 4);

  std::string bad = text;
  bad.insert(at + mixed.size(), "  equal_workers: 1.5\n");
  testing::write_text(dir / "bad_equal.yaml", bad);
  try {
    experiments::load_train_config(dir / "bad_equal.yaml");
    FAIL("expected a ConfigError");
  } catch (const common::ConfigError& e) {
    const std::string what = e.what();
    // The line the key was inserted on: the one after mixed_servers.
    const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at + mixed.size()), '\n') + 1;
    CHECK_MESSAGE(what.find("bad_equal.yaml:" + std::to_string(line)) != std::string::npos, what);
    CHECK_MESSAGE(what.find("equal_workers") != std::string::npos, what);
  }
}

TEST_CASE("orchestra draw: --min-comm-ratio keeps exactly the communication-bound seeds, each as the plain draw writes it") {
  if (!testing::fashion_mnist_or_skip()) return;
  const experiments::TrainConfig train = experiments::load_train_config(train_config());
  const double ratio = 8;
  const auto kept = experiments::draw_cluster_configs(train, 5000, 3, experiments::DrawFilter{ratio, 10000});
  REQUIRE(kept.size() == 3);
  // Every seed from the first to the last kept one was drawn: kept iff its all-reduce is at least
  // `ratio` times LCM's T*; the kept files are the unfiltered draw's, byte for byte.
  const auto plain = experiments::draw_cluster_configs(train, 5000, static_cast<int>(kept.back().seed - 5000 + 1));
  std::size_t next = 0;
  int skipped = 0;
  for (const auto& d : plain) {
    CAPTURE(d.name);
    const orchestra::DrawnCluster& c = d.cluster;
    REQUIRE(c.reference_barrier_ms > 0);
    // The reference round is these two parts (cluster_distribution.hpp).
    CHECK(c.reference_round_s == doctest::Approx((c.reference_barrier_ms + c.reference_comm_ms) / 1000.0));
    const bool comm_bound = c.reference_comm_ms >= ratio * c.reference_barrier_ms;
    if (next < kept.size() && kept[next].seed == d.seed) {
      CHECK(comm_bound);
      CHECK(kept[next].yaml == d.yaml);
      ++next;
    } else {
      CHECK_FALSE(comm_bound);
      ++skipped;
    }
  }
  CHECK(next == kept.size());
  CHECK(skipped > 0);  // a stratum, not the whole distribution: some seeds were skipped
  // Asked for more than the distribution gives within the tries: one clear error, naming the file.
  try {
    experiments::draw_cluster_configs(train, 5000, 2, experiments::DrawFilter{1e6, 3});
    FAIL("expected a ConfigError");
  } catch (const common::ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("a3c_general.yaml: clusters: only 0 of 6 clusters") != std::string::npos);
  }
}

TEST_CASE("orchestra draw: the command writes the configs, a config without clusters: is one clear line") {
  if (!testing::fashion_mnist_or_skip()) return;
  testing::TempDir tmp;
  const auto ok = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw " + train_config() + " --count 2 --seed 7 --out " + tmp / "v");
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.output);
  const auto expected = experiments::draw_cluster_configs(experiments::load_train_config(train_config()), 7, 2);
  CHECK(testing::read_text(tmp / "v/drawn-7.yaml") == expected[0].yaml);
  CHECK(testing::read_text(tmp / "v/drawn-8.yaml") == expected[1].yaml);
  CHECK_FALSE(std::filesystem::exists(tmp / "v/drawn-9.yaml"));
  CHECK_MESSAGE(ok.output.find("v/drawn-7.yaml: 12 workers, 4 servers, 0 perturbations, all-reduce ") != std::string::npos, ok.output);
  // One of a kind is singular: seed 9 draws one perturbation, seed 12 one server.
  const auto singular = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw " + train_config() + " --count 1 --seed 9 --out " + tmp / "s");
  CHECK_MESSAGE(singular.output.find(": 12 workers, 4 servers, 1 perturbation, all-reduce ") != std::string::npos, singular.output);
  const auto one_server = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw " + train_config() + " --count 1 --seed 12 --out " + tmp / "s");
  CHECK_MESSAGE(one_server.output.find(": 2 workers, 1 server, 0 perturbations, all-reduce ") != std::string::npos, one_server.output);
  CHECK_NOTHROW(experiments::load_config(tmp / "v/drawn-7.yaml"));

  const auto filtered = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw " + train_config() +
                                             " --count 1 --seed 5000 --min-comm-ratio 8 --out " + tmp / "c");
  REQUIRE_MESSAGE(filtered.exit_code == 0, filtered.output);
  const auto comm = experiments::draw_cluster_configs(experiments::load_train_config(train_config()), 5000, 1, experiments::DrawFilter{8, 10000});
  CHECK(testing::read_text(tmp / ("c/" + comm[0].name + ".yaml")) == comm[0].yaml);
  // The listing's ratio, to three significant digits (the nominal ratio is no more precise than that).
  std::ostringstream ratio;
  ratio << std::setprecision(3) << comm[0].cluster.reference_comm_ms / comm[0].cluster.reference_barrier_ms;
  CHECK_MESSAGE(filtered.output.find("all-reduce " + ratio.str() + " x LCM's T*") != std::string::npos, filtered.output);
  const auto not_a_number = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw " + train_config() + " --min-comm-ratio lots --out " + tmp / "n");
  CHECK(not_a_number.exit_code != 0);
  CHECK(not_a_number.output.find("--min-comm-ratio: expected a number") != std::string::npos);

  const auto bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " draw " + ORCHESTRA_SOURCE_DIR + "/configs/a3c_train.yaml --out " + tmp / "w");
  CHECK(bad.exit_code != 0);
  CHECK(bad.output.find("a3c_train.yaml: clusters:") != std::string::npos);
  CHECK(bad.output.find('\n') == bad.output.size() - 1);  // one line
  CHECK_FALSE(std::filesystem::exists(tmp / "w/drawn-1000.yaml"));

  // Into a folder of another experiment's results: refused, pointing at --overwrite, which draw takes.
  testing::write_results(tmp / "r");
  const std::string into_results = std::string(ORCHESTRA_BINARY) + " draw " + train_config() + " --count 1 --seed 7 --out " + tmp / "r";
  const auto refused = testing::run_command(into_results);
  CHECK(refused.exit_code != 0);
  CHECK_MESSAGE(refused.output.find("--overwrite") != std::string::npos, refused.output);
  CHECK_FALSE(std::filesystem::exists(tmp / "r/drawn-7.yaml"));
  const auto replaced = testing::run_command(into_results + " --overwrite --quiet");
  REQUIRE_MESSAGE(replaced.exit_code == 0, replaced.output);
  CHECK(std::filesystem::exists(tmp / "r/drawn-7.yaml"));
  CHECK_FALSE(std::filesystem::exists(tmp / "r/dsgd"));
}
