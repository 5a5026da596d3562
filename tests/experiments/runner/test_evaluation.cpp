// `orchestra evaluate` end to end on a tiny cluster: every controller runs for every seed, the
// oracle is the best static T of the sweep per seed, and the ratios in evaluation.csv are the
// per-seed summaries' times over it, recomputed here from the results folders.
#include <doctest/doctest.h>

#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agents/policy_file.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/evaluation.hpp"
#include "orchestra/rl_state.hpp"
#include "test_helpers.hpp"

namespace {

const char* kTinyEvaluation = R"(name: tiny
seed: 1
data:
  dataset: synthetic
  synthetic: {train: 512, test: 128, side: 6, noise: 1.0}
model: {arch: mlp, hidden: [16]}
training: {global_batch: 32, epochs: 3, target_accuracy: 0.6, eval_every_rounds: 1}
cluster:
  servers:
    - {name: s0, workers: [{name: fast, time_model: {coefficients: [2, 0.1]}, max_batch: 64, noise: 0.05}]}
    - {name: s1, workers: [{name: slow, time_model: {coefficients: [5, 0.3]}, max_batch: 64, noise: 0.05}]}
network: {bandwidth_gbps: 1, message_mb: 2}
policies: [dsgd]
)";

double number(const nlohmann::json& j) { return j.is_null() ? NAN : j.get<double>(); }

}  // namespace

TEST_CASE("the sweep of static barriers: log-spaced from the slowest step to 64 times it") {
  const auto config = experiments::parse_config(kTinyEvaluation, "tiny.yaml");
  // B / N = 16: the slow worker's step is 5 + 0.3 * 16 = 9.8 ms; 64 times it is 627.2 ms.
  const std::vector<double> sweep = experiments::barrier_sweep(config, 4);
  REQUIRE(sweep.size() == 4);
  CHECK(sweep[0] == 10);  // rounded to whole ms
  CHECK(sweep[1] == std::round(9.8 * 4));
  CHECK(sweep[2] == std::round(9.8 * 16));
  CHECK(sweep[3] == std::round(9.8 * 64));
  CHECK(experiments::policy_label({"a/policy.pt"}, 0) == "orchestra-a3c");
  CHECK(experiments::policy_label({"runs/eq1/policy.pt", "runs/time/policy.pt"}, 1) == "a3c:time");
}

TEST_CASE("orchestra evaluate: every controller per seed, the oracle and the ratios checked against the results folders") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir dir;
  testing::write_text(dir / "tiny.yaml", kTinyEvaluation);
  torch::manual_seed(4);
  agents::PolicyControl control;
  control.move = orchestra::BarrierMove::Multiplicative;
  control.interval = orchestra::DecisionInterval::Rounds;
  control.interval_rounds = 2;
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}}), 0, control).save(dir / "policy.pt");

  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "policy.pt") + " " + (dir / "tiny.yaml") +
                                      " --seeds 1-2 --sweep-ms 10,40,160 --quiet --plot --out " + (dir / "eval"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("| cluster | orchestra-a3c | orchestra-lcm | orchestra-random |") != std::string::npos);

  // The generated experiment: the policy with its recorded interval, LCM, random and the sweep
  // with the policy's interval, stopping at the target.
  const auto generated = experiments::load_config(dir / "eval/tiny/evaluate.yaml");
  CHECK(generated.budget.stop_at_target);
  CHECK(generated.policies.size() == 6);
  CHECK(testing::read_text(dir / "eval/tiny/evaluate.yaml").find("interval_rounds: 2") != std::string::npos);
  CHECK(testing::read_text(dir / "eval/tiny/evaluate.yaml").find("weighting") == std::string::npos);  // uniform: the default

  // Recompute the judgement from the per-seed summaries.
  std::map<std::uint64_t, double> oracle;
  std::map<std::uint64_t, std::string> best_sweep_point;  // with two seeds, what the other seed tunes
  for (std::uint64_t seed : {1, 2})
    for (const char* t : {"10", "40", "160"}) {
      const auto s = nlohmann::json::parse(testing::read_text(dir / ("eval/tiny/seed-" + std::to_string(seed) + "/fixed-t-T_ms=" + t + "/summary.json")));
      const double time = number(s["time_to_target_s"]);
      if (std::isfinite(time) && (!oracle.count(seed) || time < oracle[seed])) {
        oracle[seed] = time;
        best_sweep_point[seed] = std::string("fixed-t-T_ms=") + t;
      }
    }
  REQUIRE(oracle.size() == 2);  // the target is easy: some static T reached it on both seeds
  const std::string csv = testing::read_text(dir / "eval/evaluation.csv");
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  int rows = 0;
  double log_sum = 0, lcm_log_sum = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::stringstream cell(line);
    for (std::string c; std::getline(cell, c, ',');) cells.push_back(c);
    if (cells.size() < 9) cells.resize(9);
    REQUIRE(cells[0] == "tiny");
    const std::uint64_t seed = std::stoull(cells[1]);
    // fixed-t-other-seeds: the other seed's best static T, run on this seed.
    const std::string folder = cells[2] == "fixed-t-other-seeds" ? best_sweep_point[3 - seed] : cells[2];
    const auto s = nlohmann::json::parse(testing::read_text(dir / ("eval/tiny/seed-" + std::to_string(seed) + "/" + folder + "/summary.json")));
    const double reached = number(s["time_to_target_s"]);
    const double time = std::isfinite(reached) ? reached : number(s["sim_time_s"]);
    CHECK(std::stod(cells[6]) == doctest::Approx(oracle[seed]));
    CHECK(std::stod(cells[8]) == doctest::Approx(time / oracle[seed]));
    if (cells[2] == "orchestra-a3c") log_sum += std::log(time / oracle[seed]);
    if (cells[2] == "orchestra-lcm") lcm_log_sum += std::log(time / oracle[seed]);
    ++rows;
  }
  CHECK(rows == 8);  // 2 seeds x (3 judged controllers and fixed-t-other-seeds)
  const std::string md = testing::read_text(dir / "eval/evaluation.md");
  char expected[32];
  std::snprintf(expected, sizeof expected, "| tiny | %.2fx", std::exp(log_sum / 2));
  CHECK(md.find(expected) != std::string::npos);

  // evaluation_overall.csv, per controller: one cluster has no interval, and the pairing with
  // orchestra-lcm is the geomean over seeds of the policy's time over LCM's.
  const std::string overall = testing::read_text(dir / "eval/evaluation_overall.csv");
  CHECK(overall.rfind("controller,clusters,runs,misses,ratio,ratio_ci95_low,ratio_ci95_high,vs_orchestra_lcm,", 0) == 0);
  const std::size_t a3c_row = overall.find("\norchestra-a3c,1,2,");
  REQUIRE(a3c_row != std::string::npos);
  std::vector<std::string> a3c_cells;
  std::stringstream a3c_line(overall.substr(a3c_row + 1, overall.find('\n', a3c_row + 1) - a3c_row - 1));
  for (std::string c; std::getline(a3c_line, c, ',');) a3c_cells.push_back(c);
  REQUIRE(a3c_cells.size() >= 11);  // empty cells at the end (no interval for one cluster) may be cut
  CHECK(std::stod(a3c_cells[4]) == doctest::Approx(std::exp(log_sum / 2)));
  CHECK(a3c_cells[5].empty());
  CHECK(std::stod(a3c_cells[7]) == doctest::Approx(std::exp((log_sum - lcm_log_sum) / 2)));
  CHECK(a3c_cells[8].empty());
  CHECK(!a3c_cells[10].empty());  // against fixed-t-other-seeds
  CHECK(overall.find("\norchestra-lcm,1,2,") != std::string::npos);

  // --plot: the bars per cluster and the policy's T against the oracle's, as PNG, SVG and script.
  for (const char* figure : {"evaluation", "barrier_vs_oracle"})
    for (const char* ext : {".png", ".svg", ".gp"}) CHECK(std::filesystem::file_size(dir / ("eval/plots/" + std::string(figure) + ext)) > 100);
  CHECK(testing::read_text(dir / "eval/plots/evaluation.png").rfind("\x89PNG", 0) == 0);
  const std::string bars = testing::read_text(dir / "eval/plots/evaluation.gp");
  CHECK(bars.find("\"geometric mean\"") != std::string::npos);
  const std::size_t tiny_row = bars.find("\n\"tiny\" ");
  REQUIRE(tiny_row != std::string::npos);
  CHECK(std::stod(bars.substr(tiny_row + 8)) == doctest::Approx(std::exp(log_sum / 2)).epsilon(1e-6));  // a3c's bar
  const std::string trace = testing::read_text(dir / "eval/plots/barrier_vs_oracle.gp");
  CHECK(trace.find("tiny (seed 1)") != std::string::npos);
  CHECK(r.output.find("Figures: ") != std::string::npos);

  // compare on the folder: the same judgement again, and the figures redrawn.
  const std::string table = testing::read_text(dir / "eval/evaluation.md");
  std::filesystem::remove_all(dir / "eval/plots");
  const auto again = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "eval") + " --plot");
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.rfind(table, 0) == 0);
  CHECK(testing::read_text(dir / "eval/evaluation.md") == table);
  CHECK(testing::read_text(dir / "eval/evaluation_overall.csv") == overall);
  CHECK(testing::read_text(dir / "eval/plots/evaluation.gp") == bars);
  // With --out (and --gnuplot) it writes there, and leaves the evaluation's folder as it was.
  const auto elsewhere = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "eval") + " --plot --quiet --out " +
                                              (dir / "again") + " --gnuplot gnuplot");
  CHECK(elsewhere.exit_code == 0);
  CHECK(testing::read_text(dir / "again/evaluation.md") == table);
  CHECK(testing::read_text(dir / "again/plots/evaluation.gp") == bars);
  const auto no_gnuplot = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "eval") + " --plot --quiet --out " +
                                               (dir / "again2") + " --gnuplot /nonexistent/gnuplot");
  CHECK(no_gnuplot.exit_code != 0);
  CHECK(no_gnuplot.output.find("/nonexistent/gnuplot") != std::string::npos);
  // evaluate --plot again onto a user's image of a figure's name: refused before any run (it was
  // after them all), the image and the evaluation as they were.
  testing::write_text(dir / "again/plots/barrier_vs_oracle.png", "a user's image");
  std::filesystem::remove(dir / "again/plots/barrier_vs_oracle.gp");
  const auto user_image = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "policy.pt") + " " + (dir / "tiny.yaml") +
                                               " --seeds 1-2 --sweep-ms 10,40,160 --quiet --plot --overwrite --out " + (dir / "again"));
  CHECK(user_image.exit_code == 2);
  CHECK(user_image.output.find("barrier_vs_oracle.png: an image orchestra did not draw") != std::string::npos);
  CHECK(testing::read_text(dir / "again/plots/barrier_vs_oracle.png") == "a user's image");
  CHECK_FALSE(std::filesystem::exists(dir / "again/tiny"));
  // An evaluate.yaml cut short or edited by hand: its file and line.
  std::string kept = testing::read_text(dir / "eval/tiny/evaluate.yaml");
  const std::size_t t_ms = kept.find("T_ms: ");
  REQUIRE(t_ms != std::string::npos);
  testing::write_text(dir / "eval/tiny/evaluate.yaml", std::string(kept).replace(t_ms, 6, "T_ms: fast"));
  const auto damaged = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "eval") + " --quiet");
  CHECK(damaged.exit_code == 2);
  CHECK(damaged.output.rfind("orchestra: data error: " + (dir / "eval/tiny/evaluate.yaml") + ":", 0) == 0);
  CHECK(damaged.output.find(": not readable as an evaluation's config (bad conversion)") != std::string::npos);
  testing::write_text(dir / "eval/tiny/evaluate.yaml", kept);

  // Bad input: a policy that is not one, and no config, are one line each.
  testing::write_text(dir / "bad.pt", "not a policy");
  auto bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "bad.pt") + " " + (dir / "tiny.yaml") + " --out " + (dir / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("bad.pt: not a readable policy file") != std::string::npos);
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "policy.pt"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("orchestra evaluate: needs POLICY.pt and CONFIG.yaml files (try: orchestra evaluate --help)") != std::string::npos);
}

TEST_CASE("plot_evaluation: where no controller reached the target and no cluster has an oracle, nothing is drawn (gnuplot refuses an empty histogram)") {
  testing::TempDir dir;
  experiments::EvaluationSummary summary;
  experiments::ClusterScore cluster;
  cluster.cluster = "slow";
  cluster.seeds_without_oracle = {1};
  experiments::ControllerScore missed;
  missed.controller = "a3c";
  missed.runs = 1;
  missed.misses = 1;
  cluster.controllers.push_back(missed);
  summary.clusters.push_back(cluster);
  summary.overall.push_back(missed);
  experiments::PlotOptions options;
  options.gnuplot.program = "/nonexistent/gnuplot";  // not run: nothing to draw
  CHECK(experiments::plot_evaluation(dir / "eval", summary, "a3c", options).empty());
  CHECK_FALSE(std::filesystem::exists(dir / "eval/plots"));
}

TEST_CASE("orchestra evaluate --epochs --target: every run on the changed workload, the baselines' times at the other target") {
  testing::TempDir dir;
  testing::write_text(dir / "tiny.yaml", kTinyEvaluation);  // 3 epochs to 60%
  torch::manual_seed(6);
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}})).save(dir / "policy.pt");
  const std::string base = std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "policy.pt") + " " + (dir / "tiny.yaml") + " --seeds 1 --sweep-ms 10,160 --quiet";
  auto summary = [&](const std::string& out, const std::string& controller) {
    return nlohmann::json::parse(testing::read_text(dir / (out + "/tiny/seed-1/" + controller + "/summary.json")));
  };
  const std::vector<std::string> baselines{"orchestra-lcm", "fixed-t-T_ms=10", "fixed-t-T_ms=160"};
  const auto as_given = testing::run_command(base + " --out " + (dir / "given"));
  REQUIRE_MESSAGE(as_given.exit_code == 0, as_given.output);
  const auto lower = testing::run_command(base + " --epochs 2 --target 0.4 --out " + (dir / "lower"));
  REQUIRE_MESSAGE(lower.exit_code == 0, lower.output);
  const auto ran = experiments::load_config(dir / "lower/tiny/evaluate.yaml");
  CHECK(ran.budget.epochs == 2);
  CHECK(ran.budget.target_accuracy == 0.4);
  CHECK(std::regex_search(testing::read_text(dir / "lower/tiny/evaluate.yaml"), std::regex(R"(target_accuracy: 0\.4[,}\s])")));  // as a person writes it
  CHECK(experiments::load_config(dir / "given/tiny/evaluate.yaml").budget.target_accuracy == 0.6);
  // A baseline's run does not depend on the target until it stops there: at 40% it stops no later
  // than at 60%, and some earlier.
  int earlier = 0;
  for (const auto& controller : baselines) {
    const auto at_60 = summary("given", controller), at_40 = summary("lower", controller);
    CHECK(at_40["target_accuracy"] == 0.4);
    REQUIRE_MESSAGE(at_40["reached_target"] == true, controller);
    if (at_60["reached_target"] == true) {
      CHECK(at_40["time_to_target_s"].get<double>() <= at_60["time_to_target_s"].get<double>());
      earlier += at_40["time_to_target_s"].get<double>() < at_60["time_to_target_s"].get<double>();
    }
  }
  CHECK(earlier > 0);
  // One epoch to an accuracy the model never reaches: every run misses and ends after one epoch.
  const auto budget = testing::run_command(base + " --epochs 1 --target 0.99 --out " + (dir / "budget"));
  REQUIRE_MESSAGE(budget.exit_code == 0, budget.output);
  for (const auto& controller : baselines) {
    CHECK(summary("budget", controller)["reached_target"] == false);
    CHECK(summary("budget", controller)["epochs"] == 1);
  }
  // Bad values, and a workload with --baselines-from (whose baselines ran on theirs): one line each.
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--target 0", "--target: expected an accuracy in (0, 1], got '0'"},
           {"--target 1.5", "--target: expected a number in [0, 1], got '1.5'"},
           {"--epochs 0", "--epochs: expected an integer in [1, 1000000], got '0'"}}) {
    const auto bad = testing::run_command(base + " " + flags + " --out " + (dir / "bad"));
    CHECK_MESSAGE(bad.exit_code == 2, flags);
    CHECK_MESSAGE(bad.output.find(message) != std::string::npos, bad.output);
  }
  const auto mixed = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "policy.pt") + " --baselines-from " + (dir / "given") +
                                          " --target 0.5 --quiet --out " + (dir / "bad"));
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.output.find("given's workload: drop --epochs and --target") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad"));
}

TEST_CASE("orchestra evaluate: the random controller starts where the policy does, at the plan in its bounds or at LCM's T*") {
  testing::TempDir dir;
  // A drawn held-out cluster, the pretrained surrogate's workload, run on the surrogate (seconds).
  YAML::Node drawn = YAML::LoadFile(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/heldout_twentysecond/drawn-140001.yaml");
  drawn["runtime"]["training"] = "surrogate";
  drawn["runtime"]["surrogate"] = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/surrogate-controller-task.json";
  YAML::Emitter text;
  text << drawn;
  testing::write_text(dir / "drawn.yaml", text.c_str());
  const std::string shipped = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/orchestra-a3c.pt";
  const auto planned = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + shipped + " " + (dir / "drawn.yaml") +
                                            " --seeds 1 --sweep-ms 100,400 --quiet --out " + (dir / "planned"));
  REQUIRE_MESSAGE(planned.exit_code == 0, planned.output);
  const YAML::Node random = YAML::LoadFile(dir / "planned/drawn/evaluate.yaml")["policies"][2];
  REQUIRE(random["name"].as<std::string>() == "orchestra-random");
  CHECK(random["start"].as<std::string>() == "planned");
  CHECK(random["planned_min_T_x_start"].as<double>() == 0.25);
  CHECK(random["planned_max_T_x_start"].as<double>() == 1);
  auto resolved = [&](const std::string& out, const std::string& run) {
    return nlohmann::json::parse(testing::read_text(dir / (out + "/seed-1/" + run + "/config.json")))["policy"];
  };
  // Both start at the same planned T, bounded to [T/4, T] around it; the first round runs it.
  const auto policy = resolved("planned/drawn", "orchestra-a3c"), ablation = resolved("planned/drawn", "orchestra-random");
  CHECK(ablation["plan"]["T_ms"] == policy["plan"]["T_ms"]);
  CHECK(ablation["min_T_x_start"] == 0.25);
  CHECK(ablation["max_T_x_start"] == 1);
  const std::string rounds = testing::read_text(dir / "planned/drawn/seed-1/orchestra-random/rounds.csv");
  const std::string first_row = rounds.substr(rounds.find('\n') + 1, rounds.find('\n', rounds.find('\n') + 1) - rounds.find('\n') - 1);
  CHECK(std::stod(first_row.substr(first_row.rfind(',') + 1)) == policy["plan"]["T_ms"].get<double>());
  // Those baselines are not the ones of a policy deployed from LCM's T* (the network as trained).
  const auto from_lcm = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + ORCHESTRA_SOURCE_DIR +
                                             "/pretrained/candidates/genet-s14-3-2000.pt --baselines-from " + (dir / "planned") + " --out " +
                                             (dir / "bad"));
  CHECK(from_lcm.exit_code == 2);
  CHECK(from_lcm.output.find("orchestra-random ran with ") != std::string::npos);
  CHECK(from_lcm.output.find("start: planned") != std::string::npos);
  // Where the policy cannot plan (a workload the pretrained surrogate does not know), neither does
  // the random controller: both start at LCM's T*.
  testing::write_text(dir / "tiny.yaml", kTinyEvaluation);
  const auto unknown = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + shipped + " " + (dir / "tiny.yaml") +
                                            " --seeds 1 --sweep-ms 10,40 --quiet --out " + (dir / "unknown"));
  REQUIRE_MESSAGE(unknown.exit_code == 0, unknown.output);
  CHECK_FALSE(YAML::LoadFile(dir / "unknown/tiny/evaluate.yaml")["policies"][2]["start"]);
  CHECK(resolved("unknown/tiny", "orchestra-a3c")["start"] == "lcm");
  CHECK_FALSE(resolved("unknown/tiny", "orchestra-random").contains("plan"));
  // Each run's config.json says why, the random controller's as the policy's.
  const std::string why = "does not know this workload";
  CHECK(resolved("unknown/tiny", "orchestra-a3c")["start_fallback"].get<std::string>().find(why) != std::string::npos);
  CHECK(resolved("unknown/tiny", "orchestra-random")["start_fallback"].get<std::string>().find(why) != std::string::npos);
  CHECK_FALSE(ablation.contains("start_fallback"));
}

TEST_CASE("orchestra evaluate 2>&1 | cat: a progress line per cluster, then the end, on stderr") {
  testing::TempDir dir;
  testing::write_text(dir / "box_a.yaml", kTinyEvaluation);
  testing::write_text(dir / "box_b.yaml", kTinyEvaluation);
  torch::manual_seed(5);
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}})).save(dir / "policy.pt");
  const auto r = testing::run_command("ORCHESTRA_PROGRESS_EVERY_S=0.05 " + std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "policy.pt") + " " +
                                      (dir / "box_a.yaml") + " " + (dir / "box_b.yaml") + " --seeds 1 --sweep-ms 20,80 --out " + (dir / "eval") +
                                      " 2>&1 | cat");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(std::regex_search(r.output, std::regex(R"((^|\n)evaluate  0/2 clusters \(0%\)  running box_a  seeds 1  elapsed \d+:\d\d  ETA \S+\n)")));
  // In between, a line per cluster when the interval has passed (a tiny cluster takes less): the
  // count never goes back and names the cluster being run.
  const std::regex line(R"(^evaluate  (\d)/2 clusters \(\d+%\)  (running (box_a|box_b)  seeds 1  )?elapsed \d+:\d\d  ETA \S+$)");
  std::istringstream lines(r.output);
  int last = -1;
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, line)) continue;
    CHECK(std::stoi(m[1]) >= last);
    last = std::stoi(m[1]);
    if (m[3].matched) CHECK(m[3] == (last == 0 ? "box_a" : "box_b"));
  }
  CHECK(last == 2);
  CHECK(std::regex_search(r.output, std::regex(R"(\nevaluate  2/2 clusters \(100%\)  elapsed \d+:\d\d  ETA 0:00\n)")));
  // --quiet: none of it.
  const auto quiet = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "policy.pt") + " " + (dir / "box_a.yaml") +
                                          " --seeds 1 --sweep-ms 20,80 --quiet --out " + (dir / "quiet") + " 2>&1 | cat");
  CHECK(quiet.output.find("clusters (") == std::string::npos);
}

TEST_CASE("orchestra evaluate --baselines-from: only the policies run, and the tables are the full evaluation's") {
  testing::TempDir dir;
  testing::write_text(dir / "tiny.yaml", kTinyEvaluation);
  agents::PolicyControl control;
  control.move = orchestra::BarrierMove::Multiplicative;
  control.interval = orchestra::DecisionInterval::Rounds;
  control.interval_rounds = 2;
  for (const char* name : {"a", "b"}) {
    torch::manual_seed(name[0]);
    std::filesystem::create_directories(dir / name);
    agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}}), 0, control)
        .save(dir / (std::string(name) + "/policy.pt"));
  }
  // Three more controllers judged beside the policies: T = 4 all-reduce times, DSGD, and an
  // orchestra-lcm with keys the policies do not record (judged, so not a baseline to compare).
  const std::string policies = " " + (dir / "a/policy.pt") + " " + (dir / "b/policy.pt") +
                               " --also '{name: fixed-t, label: t-4-comm, T_x_comm: 4}' --also dsgd" +
                               " --also '{name: orchestra-lcm, label: lcm-capped, T_cap_steps: 2}'";
  const auto full = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate" + policies + " " + (dir / "tiny.yaml") +
                                         " --seeds 1-2 --sweep-ms 10,40,160 --quiet --out " + (dir / "full"));
  INFO(full.output);
  REQUIRE(full.exit_code == 0);
  // They are judged, not part of the oracle: a row per seed each, and the fixed-t has the policy's
  // decision interval, as the sweep has.
  const std::string rows = testing::read_text(dir / "full/evaluation.csv");
  for (const char* judged : {"\ntiny,1,t-4-comm,", "\ntiny,2,t-4-comm,", "\ntiny,1,dsgd,", "\ntiny,2,a3c:b,", "\ntiny,2,lcm-capped,"})
    CHECK(rows.find(judged) != std::string::npos);
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 1 + 2 * 8);  // 2 seeds x (2 policies, 3 more, LCM, random, other-seeds)
  const YAML::Node written = YAML::LoadFile(dir / "full/tiny/evaluate.yaml");
  CHECK(written["policies"][2]["label"].as<std::string>() == "t-4-comm");
  CHECK(written["policies"][2]["interval_rounds"].as<int>() == 2);

  // The same policies on the earlier evaluation's baselines, two seeds in two processes: the same
  // tables, byte for byte.
  const auto reuse = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate" + policies + " --baselines-from " + (dir / "full") +
                                          " --jobs 2 --quiet --out " + (dir / "reuse"));
  INFO(reuse.output);
  REQUIRE(reuse.exit_code == 0);
  for (const char* table : {"evaluation.md", "evaluation.csv", "evaluation_overall.csv"})
    CHECK(testing::read_text(dir / ("reuse/" + std::string(table))) == testing::read_text(dir / ("full/" + std::string(table))));
  CHECK(reuse.output.rfind(testing::read_text(dir / "full/evaluation.md"), 0) == 0);
  // Every controller is in the folder's evaluate.yaml, the policies first; the baselines' runs
  // say where they came from, the policies' runs ran here.
  const auto generated = experiments::load_config(dir / "reuse/tiny/evaluate.yaml");
  REQUIRE(generated.policies.size() == 10);
  CHECK(testing::read_text(dir / "reuse/tiny/evaluate.yaml").find("copied from") != std::string::npos);
  for (const char* run : {"orchestra-lcm", "orchestra-random", "fixed-t-T_ms=40"}) {
    const auto s = nlohmann::json::parse(testing::read_text(dir / ("reuse/tiny/seed-2/" + std::string(run) + "/summary.json")));
    CHECK(s["copied_from"].get<std::string>() == (std::filesystem::path(dir / "full/tiny/seed-2") / run).lexically_normal().string());
  }
  for (const char* ran : {"a3c:a", "t-4-comm", "dsgd", "lcm-capped"})
    CHECK(!nlohmann::json::parse(testing::read_text(dir / ("reuse/tiny/seed-2/" + std::string(ran) + "/summary.json"))).contains("copied_from"));
  CHECK(std::filesystem::exists(dir / "reuse/tiny/seed-2.log"));  // the policies ran in a child process

  // A policy that moves T otherwise than the baselines did: named, before anything runs.
  control.move = orchestra::BarrierMove::Additive;
  control.unit_ms = 150;
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}}), 0, control).save(dir / "additive.pt");
  auto bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "additive.pt") + " --baselines-from " + (dir / "full") +
                                  " --out " + (dir / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("full/tiny/evaluate.yaml: orchestra-random ran with factor: 2, interval: rounds, interval_rounds: 2, move: multiplicative") !=
        std::string::npos);
  CHECK(bad.output.find("run the full evaluation instead of --baselines-from") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bad/tiny/seed-1"));
  // A policy trained with Eq. 2 with N fixed: uniform baselines are another environment, and so is
  // a second policy trained with uniform weights.
  control.move = orchestra::BarrierMove::Multiplicative;
  control.weighting = env::AverageWeighting::AllWorkers;
  agents::A3cPolicy(agents::ActorCritic(agents::ActorCriticSpec{orchestra::StateLayout::kStateSize, {8}}), 0, control).save(dir / "all.pt");
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "all.pt") + " --baselines-from " + (dir / "full") +
                             " --out " + (dir / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("full/tiny/evaluate.yaml: orchestra-lcm ran with the defaults (decisions every epoch), but " + (dir / "all.pt") +
                        " records weighting: all_workers") != std::string::npos);
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "all.pt") + " " + (dir / "a/policy.pt") + " " +
                             (dir / "tiny.yaml") + " --out " + (dir / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("was trained with weighting uniform but " + (dir / "all.pt") + " with all_workers: their baselines differ") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bad/tiny/seed-1"));
  // Its own full evaluation runs every baseline with all_workers.
  const auto own = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "all.pt") + " " + (dir / "tiny.yaml") +
                                        " --seeds 1 --sweep-ms 10,40 --quiet --out " + (dir / "all"));
  INFO(own.output);
  REQUIRE(own.exit_code == 0);
  const YAML::Node all_policies = YAML::LoadFile(dir / "all/tiny/evaluate.yaml")["policies"];
  REQUIRE(all_policies.size() == 5);  // the policy, LCM, random, two sweep points
  for (std::size_t k = 1; k < all_policies.size(); ++k) CHECK(all_policies[k]["weighting"].as<std::string>() == "all_workers");
  for (const char* run : {"orchestra-a3c", "orchestra-lcm", "orchestra-random", "fixed-t-T_ms=40"})  // the policy: from its file
    CHECK(nlohmann::json::parse(testing::read_text(dir / ("all/tiny/seed-1/" + std::string(run) + "/config.json")))["policy"]["weighting"] ==
          "all_workers");
  // What the earlier evaluation fixes cannot be given again, and it is not overwritten.
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate" + policies + " " + (dir / "tiny.yaml") + " --baselines-from " + (dir / "full"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("give no CONFIG files") != std::string::npos);
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate" + policies + " --seeds 1 --baselines-from " + (dir / "full"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("drop --seeds, --sweep and --sweep-ms") != std::string::npos);
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate" + policies + " --baselines-from " + (dir / "full") + " --out " + (dir / "full"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("are one folder") != std::string::npos);
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "a/policy.pt") + " --also '{name: fixed-t, label: orchestra-lcm, T_ms: 5}'" +
                             " --baselines-from " + (dir / "full") + " --out " + (dir / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("two controllers would be judged under one name (orchestra-lcm)") != std::string::npos);
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "a/policy.pt") + " --also '{name: [' --baselines-from " +
                             (dir / "full") + " --out " + (dir / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--also {name: [: not a policy entry") != std::string::npos);
  // A list value is a sweep whose runs the tables never find: they failed after every run.
  bad = testing::run_command(std::string(ORCHESTRA_BINARY) + " evaluate " + (dir / "a/policy.pt") + " --also '{name: fixed-t, T_ms: [50, 60]}'" +
                             " --baselines-from " + (dir / "full") + " --out " + (dir / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--also {name: fixed-t, T_ms: [50, 60]}: a list value is a sweep of 2 policies") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad"));
  CHECK(testing::read_text(dir / "reuse/evaluation.csv") == testing::read_text(dir / "full/evaluation.csv"));
}
