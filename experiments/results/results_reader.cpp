#include "experiments/results/results_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "common/csv_table.hpp"
#include "common/names.hpp"
#include "experiments/results/results_folder.hpp"

namespace experiments {
namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Sub-folders in name order; hidden ones (a run's staging folders, ".git") are skipped.
std::vector<fs::path> sub_folders(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] != '.' && entry.is_directory(ec)) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What a number of summary.json may be: compare and calibrate refuse a file outside these ranges
// rather than print "reaches 70% first in -1.00 s".
struct FieldRange {
  double min, max;
  bool whole = false;  // a count
};
constexpr FieldRange kFraction{0.0, 1.0}, kNonNegative{0.0, std::numeric_limits<double>::max()},
    kCount{0.0, 9.2e18, true}, kEpoch{1.0, 2147483647.0, true};

// A number from summary.json: absent or null reads as NaN; any other type, or a value outside
// `range`, is an error naming the file and the key.
double number_field(const nlohmann::json& summary, const char* key, const fs::path& file, const FieldRange& range = kNonNegative) {
  const auto it = summary.find(key);
  if (it == summary.end() || it->is_null()) return kNaN;
  if (!it->is_number()) throw common::DataError(file.string() + ": " + key + ": expected a number, got " + it->dump());
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < range.min || v > range.max || (range.whole && v != std::floor(v))) {
    std::ostringstream expect;
    expect << (range.whole ? "a whole number" : "a number") << " >= " << range.min;
    if (range.max < 1e18) expect << " and <= " << range.max;
    throw common::DataError(file.string() + ": " + key + ": expected " + expect.str() + ", got " + it->dump() + ": results out of range are not compared");
  }
  return v;
}

// A row of epochs.csv or evals.csv: the same ranges.
void check_row_value(double v, const FieldRange& range, bool nan_allowed, const common::CsvTable& t, std::size_t row, std::size_t column) {
  if (std::isnan(v) && nan_allowed) return;
  if (std::isfinite(v) && v >= range.min && v <= range.max && (!range.whole || v == std::floor(v))) return;
  throw common::DataError(t.source + ":" + std::to_string(t.lines[row]) + ": " + t.columns[column] + ": " + std::to_string(v) +
                          " is out of range: results out of range are not compared");
}

// Absent: the fallback; present, a string (anything else is not a run's summary).
std::string text_field(const nlohmann::json& summary, const char* key, const std::string& fallback, const fs::path& path) {
  const auto it = summary.find(key);
  if (it == summary.end()) return fallback;
  if (!it->is_string()) throw common::DataError(path.string() + ": " + key + ": expected a string, got " + it->dump());
  return it->get<std::string>();
}

// A real run's files name their clock wall_time_s, a simulated run's sim_time_s.
std::size_t time_column(const common::CsvTable& t) {
  if (const auto wall = t.find("wall_time_s")) return *wall;
  return t.column("sim_time_s");
}

std::vector<EpochRow> read_epochs(const fs::path& path) {
  std::vector<EpochRow> rows;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return rows;
  const common::CsvTable t = common::read_csv(path.string());
  const auto epoch = t.column("epoch"), time = time_column(t), acc = t.column("accuracy"), loss = t.column("loss");
  const auto se = t.find("straggler_effect"), util = t.find("utilization");
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    EpochRow row;
    check_row_value(t.number(r, epoch), kEpoch, false, t, r, epoch);
    row.epoch = static_cast<int>(t.number(r, epoch));
    row.sim_time_s = t.number(r, time);
    row.accuracy = t.number(r, acc);
    row.loss = t.number(r, loss);
    check_row_value(row.sim_time_s, kNonNegative, false, t, r, time);
    check_row_value(row.accuracy, kFraction, true, t, r, acc);  // nan: a timing-only run
    check_row_value(row.loss, kNonNegative, true, t, r, loss);
    row.straggler_effect = se ? t.number(r, *se) : kNaN;
    row.utilization = util ? t.number(r, *util) : kNaN;
    if (se) check_row_value(row.straggler_effect, kNonNegative, true, t, r, *se);
    if (util) check_row_value(row.utilization, kFraction, true, t, r, *util);
    rows.push_back(row);
  }
  return rows;
}

std::vector<EvalRow> read_evals(const fs::path& path) {
  std::vector<EvalRow> rows;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return rows;
  const common::CsvTable t = common::read_csv(path.string());
  const auto round = t.column("round"), epoch = t.column("epoch"), time = time_column(t), acc = t.column("accuracy"),
             loss = t.column("loss");
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    EvalRow row;
    row.round = static_cast<std::int64_t>(t.number(r, round));
    row.epoch = static_cast<int>(t.number(r, epoch));
    row.sim_time_s = t.number(r, time);
    row.accuracy = t.number(r, acc);
    row.loss = t.number(r, loss);
    check_row_value(row.sim_time_s, kNonNegative, false, t, r, time);
    check_row_value(row.accuracy, kFraction, true, t, r, acc);
    check_row_value(row.loss, kNonNegative, true, t, r, loss);
    rows.push_back(row);
  }
  return rows;
}

bool is_regular(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string file_if_present(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) ? path.string() : std::string();
}

// The order the experiment ran its policies in: the order their folders were completed (each
// appears whole when its run ends, results_files.hpp; epochs.csv is written with it and never
// again, unlike summary.json, whose speedup can change once every policy has run). A copy with
// `cp -r` may not keep the times: then by name.
void order_as_run(std::vector<PolicyResults>& policies) {
  // Results since run_index was written say their place themselves: a copy keeps it, and so does
  // a policy run again alone (its folder newer than the others').
  const bool all_placed = std::all_of(policies.begin(), policies.end(), [](const PolicyResults& p) { return p.run_index.has_value(); });
  auto written = [](const PolicyResults& p) {
    std::error_code ec;
    return fs::last_write_time(fs::path(p.dir) / "epochs.csv", ec);
  };
  std::stable_sort(policies.begin(), policies.end(), [&](const PolicyResults& a, const PolicyResults& b) {
    if (all_placed && *a.run_index != *b.run_index) return *a.run_index < *b.run_index;
    const auto ta = written(a), tb = written(b);
    if (ta != tb) return ta < tb;
    return a.label < b.label;
  });
}

// A folder of results that is not one experiment's: a multi-seed run (seed-<N>/ of policy
// folders), an evaluation (<cluster>/evaluate.yaml), or "" for anything else.
std::string results_kind(const fs::path& dir) {
  std::error_code ec;
  bool seeds = false, evaluation = fs::exists(dir / "evaluation.md", ec) || fs::exists(dir / "evaluate.yaml", ec);
  for (const auto& sub : sub_folders(dir)) {
    const std::string name = sub.filename().string();
    bool holds_policies = false;
    for (const auto& subsub : sub_folders(sub)) holds_policies = holds_policies || is_policy_folder(subsub);
    seeds = seeds || (name.rfind("seed-", 0) == 0 && holds_policies);
    evaluation = evaluation || fs::exists(sub / "evaluate.yaml", ec);
  }
  if (evaluation) return "an evaluation (orchestra evaluate): compare it on its own";
  if (seeds) return "a multi-seed run (orchestra run --seeds): compare it on its own for its summary over seeds";
  return "";
}

RunResults read_run(const fs::path& dir, const std::vector<fs::path>& policy_dirs) {
  RunResults run;
  run.dir = dir.string();
  run.name = fs::absolute(dir).lexically_normal().filename().string();
  if (run.name.empty()) run.name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  std::map<std::string, std::string> folder_of_label;
  for (const auto& p : policy_dirs) {
    run.policies.push_back(read_policy_folder(p.string()));
    if (run.train_csv.empty()) run.train_csv = file_if_present(p / "train.csv");
    // A label names a row, a figure and a key of orchestra.read_results: two folders of one label
    // (a copy keeps its summary.json's) were two rows of one name, and one of them in Python.
    const auto [at, fresh] = folder_of_label.emplace(run.policies.back().label, p.string());
    if (!fresh)
      throw common::DataError(dir.string() + ": two policy folders labelled '" + at->first + "' (" + at->second + " and " + p.string() +
                              "; the label is summary.json's): move one out, or compare them as two runs");
  }
  const std::string own_train = file_if_present(dir / "train.csv");
  if (!own_train.empty()) run.train_csv = own_train;
  order_as_run(run.policies);
  return run;
}

}  // namespace

PolicyResults read_policy_folder(const std::string& dir_name) {
  const fs::path dir(dir_name);
  const fs::path summary_path = dir / "summary.json";
  const nlohmann::json summary = common::read_json_file(summary_path.string());
  if (!summary.is_object()) throw common::DataError(summary_path.string() + ": expected a JSON object");
  PolicyResults p;
  p.dir = dir.string();
  p.label = text_field(summary, "label", fs::absolute(dir).lexically_normal().filename().string(), summary_path);
  // The label names figures (plots/<label>.iterations.png) and traces (<label>.csv): a name, never a path.
  if (const auto problem = common::name_problem(p.label))
    throw common::DataError(summary_path.string() + ": label: " + common::quoted_name(p.label) + " " + *problem + ": not a policy's results");
  p.policy = text_field(summary, "policy", p.label, summary_path);
  // What every run's summary.json holds (results_files.cpp; null where there is no value): a file
  // without them is not a run's, and read as one it would compare as a miss of time NaN.
  for (const char* key : {"target_accuracy", "time_to_target_s", "epochs"})
    if (!summary.contains(key)) throw common::DataError(summary_path.string() + ": no " + key + ": not a run's summary");
  if (!summary.contains("sim_time_s") && !summary.contains("wall_time_s"))
    throw common::DataError(summary_path.string() + ": no sim_time_s or wall_time_s: not a run's summary");
  p.target_accuracy = number_field(summary, "target_accuracy", summary_path, kFraction);
  const double ttt = number_field(summary, "time_to_target_s", summary_path);
  if (std::isfinite(ttt)) p.time_to_target_s = ttt;
  if (const auto t = summary.find("timing_only"); t != summary.end() && t->is_boolean()) p.timing_only = t->get<bool>();
  p.final_accuracy = number_field(summary, "final_accuracy", summary_path, kFraction);
  p.final_loss = number_field(summary, "final_loss", summary_path);
  if (summary.contains("wall_time_s")) p.clock = env::ClockKind::Wall;
  p.sim_time_s = number_field(summary, p.clock == env::ClockKind::Wall ? "wall_time_s" : "sim_time_s", summary_path);
  if (p.time_to_target_s && std::isfinite(p.sim_time_s) && *p.time_to_target_s > p.sim_time_s * (1 + 1e-9) + 1e-9)
    throw common::DataError(summary_path.string() + ": time_to_target_s: " + std::to_string(*p.time_to_target_s) + " is after the run's end (" +
                            std::to_string(p.sim_time_s) + " s): results out of range are not compared");
  const double epochs = number_field(summary, "epochs", summary_path, kCount);
  const double rounds = number_field(summary, "rounds", summary_path, kCount);
  p.epochs = std::isfinite(epochs) ? static_cast<std::int64_t>(epochs) : 0;
  p.rounds = std::isfinite(rounds) ? static_cast<std::int64_t>(rounds) : 0;
  p.mean_straggler_effect = number_field(summary, "mean_straggler_effect", summary_path);
  p.mean_utilization = number_field(summary, "mean_utilization", summary_path, kFraction);
  const double run_index = number_field(summary, "run_index", summary_path, kCount);
  if (std::isfinite(run_index)) p.run_index = static_cast<std::int64_t>(run_index);
  // Per worker, seconds idle at the barrier within the run (null: not measured, as NaN is written).
  if (const auto idle = summary.find("idle_s_per_worker"); idle != summary.end()) {
    if (!idle->is_array()) throw common::DataError(summary_path.string() + ": idle_s_per_worker: expected a list of seconds, got " + idle->dump());
    for (const auto& v : *idle) {
      if (!v.is_number() && !v.is_null())
        throw common::DataError(summary_path.string() + ": idle_s_per_worker: expected seconds or null, got " + v.dump());
      p.idle_s_per_worker.push_back(v.is_number() ? v.get<double>() : kNaN);
      const double s = p.idle_s_per_worker.back();
      if (v.is_number() && !(s >= 0 && (!std::isfinite(p.sim_time_s) || s <= p.sim_time_s * (1 + 1e-9) + 1e-9)))
        throw common::DataError(summary_path.string() + ": idle_s_per_worker: " + v.dump() +
                                " is out of range (idle longer than the run, or negative): results out of range are not compared");
    }
  }
  p.epoch_rows = read_epochs(dir / "epochs.csv");
  // A file cut at a line boundary still parses: its rows are counted against the summary's.
  if (is_regular(dir / "epochs.csv") && std::isfinite(epochs) && static_cast<double>(p.epoch_rows.size()) != epochs)
    throw common::DataError((dir / "epochs.csv").string() + ": " + std::to_string(p.epoch_rows.size()) + " epochs, but summary.json says " +
                            std::to_string(p.epochs) + ": a truncated or mixed results folder is not compared");
  p.evals = read_evals(dir / "evals.csv");
  p.rounds_csv = file_if_present(dir / "rounds.csv");
  p.iterations_csv = file_if_present(dir / "iterations.csv");
  return p;
}

std::vector<RunResults> read_results(const std::vector<std::string>& dirs, std::vector<SkippedFolder>* skipped) {
  if (dirs.empty()) throw common::DataError("no results directory given");
  std::vector<RunResults> runs;
  for (const auto& name : dirs) {
    const fs::path dir(name);
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw common::DataError(name + ": no such directory");
    if (!fs::is_directory(dir, ec)) throw common::DataError(name + ": not a directory");
    if (is_policy_folder(dir)) {
      runs.push_back(read_run(dir.parent_path().empty() ? fs::path(".") : dir.parent_path(), {dir}));
      continue;
    }
    std::vector<fs::path> policy_dirs;
    std::vector<fs::path> experiment_dirs;
    std::vector<SkippedFolder> passed;  // results here that are not read as part of this run
    for (const auto& sub : sub_folders(dir)) {
      if (is_policy_folder(sub)) {
        policy_dirs.push_back(sub);
        continue;
      }
      bool holds_policies = false;
      for (const auto& subsub : sub_folders(sub)) holds_policies = holds_policies || is_policy_folder(subsub);
      if (holds_policies) experiment_dirs.push_back(sub);
      else if (const std::string kind = results_kind(sub); !kind.empty()) passed.push_back({sub.string(), kind});
    }
    if (!policy_dirs.empty() || is_regular(dir / "train.csv")) {
      // A folder of `orchestra train` holds train.csv and no policy folders: its curve is plotted.
      runs.push_back(read_run(dir, policy_dirs));
      // Its policies are the run: experiments beside them (a seed's folder, ...) are not mixed in.
      for (const auto& e : experiment_dirs) passed.push_back({e.string(), "results of another run beside this one's policy folders: compare it on its own"});
    } else if (!experiment_dirs.empty()) {
      for (const auto& e : experiment_dirs) {
        std::vector<fs::path> inner;
        for (const auto& sub : sub_folders(e))
          if (is_policy_folder(sub)) inner.push_back(sub);
        runs.push_back(read_run(e, inner));
      }
    } else if (!passed.empty()) {
      std::string what;
      for (const auto& p : passed) what += (what.empty() ? "" : "; ") + p.dir + ": " + p.reason;
      throw common::DataError(name + ": no experiment's policy folders here, only " + what);
    } else {
      throw common::DataError(name + ": no results here (expected policy folders holding summary.json, as written by `orchestra run`)");
    }
    if (skipped) skipped->insert(skipped->end(), passed.begin(), passed.end());
  }
  return runs;
}

}  // namespace experiments
