#include "experiments/surrogate/logged_episodes.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.hpp"
#include "common/number_text.hpp"
#include "common/json_file.hpp"
#include "experiments/surrogate/round_log.hpp"

namespace experiments {
namespace {

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, separator)) out.push_back(field);
  if (!line.empty() && line.back() == separator) out.emplace_back();
  return out;
}

// A log's JSON file; a missing one says what the folder should have been.
nlohmann::json read_json(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) throw common::DataError(path.string() + ": missing (not a folder written by orchestra surrogate log)");
  return common::read_json_file(path.string());
}

std::vector<std::filesystem::path> files_of(const std::string& folder, const std::string& prefix) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".csv") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

double number(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used == text.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw common::DataError(where + ": expected a number, got '" + text + "'");
}

// Per episode id, the rounds its episodes row says it ran: its rounds rows must be exactly those.
using RoundCounts = std::map<std::int64_t, std::int64_t>;

void read_episodes_file(const std::filesystem::path& path, const std::string& folder, std::map<std::int64_t, LoggedEpisode>& episodes,
                        RoundCounts& counts) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto header = split(line, ',');
  const auto column = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw common::DataError(path.string() + ": no column '" + name + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t id_col = column("episode"), schedule_col = column("schedule"), rounds_col = column("rounds");
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const auto f = split(line, ',');
    const std::string where = path.string() + ":" + std::to_string(n);
    if (f.size() != header.size()) throw common::DataError(where + ": expected " + std::to_string(header.size()) + " fields");
    LoggedEpisode e;
    e.source = folder;
    e.id = static_cast<std::int64_t>(number(f[id_col], where));
    e.static_barrier = f[schedule_col] == "static";
    if (episodes.count(e.id)) throw common::DataError(where + ": episode " + std::to_string(e.id) + " is in two rows (two logs in one folder?)");
    counts[e.id] = static_cast<std::int64_t>(number(f[rounds_col], where));
    episodes[e.id] = e;
  }
}

void read_rounds_file(const std::filesystem::path& path, std::map<std::int64_t, LoggedEpisode>& episodes) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  if (line != round_log_header()) throw common::DataError(path.string() + ":1: not the header of a round log (another version?)");
  const auto header = split(line, ',');
  const auto column = [&](const char* name) { return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin()); };
  const std::size_t c_episode = column("episode"), c_round = column("round"), c_weighting = column("weighting"), c_lr = column("lr"), c_clock = column("clock_ms"),
                    c_progress = column("progress_after"), c_plan = column("plan"), c_loss_before = column("loss_before"),
                    c_acc_before = column("acc_before"), c_loss = column("loss_after"), c_acc = column("acc_after"),
                    c_train = column("train_loss"), c_end = column("epoch_end");
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const auto f = split(line, ',');
    const std::string where = path.string() + ":" + std::to_string(n);
    if (f.size() != header.size()) throw common::DataError(where + ": expected " + std::to_string(header.size()) + " fields");
    const auto id = static_cast<std::int64_t>(number(f[c_episode], where));
    const auto it = episodes.find(id);
    if (it == episodes.end()) throw common::DataError(where + ": episode " + std::to_string(id) + " is not in the episodes files");
    LoggedEpisode& e = it->second;
    // Each episode's rounds in order, each once: a chunk logged twice, or rows out of place, would
    // fit the surrogate on rounds that never followed each other.
    if (number(f[c_round], where) != static_cast<double>(e.rounds.size()))
      throw common::DataError(where + ": round " + f[c_round] + " of episode " + std::to_string(id) + ", expected round " +
                              std::to_string(e.rounds.size()) + " (rounds repeated or out of order)");
    if (e.rounds.empty()) {
      e.initial_loss = number(f[c_loss_before], where);
      e.initial_accuracy = number(f[c_acc_before], where);
    }
    LoggedRound r;
    const auto weighting = env::weighting_from_name(f[c_weighting]);
    if (!weighting) throw common::DataError(where + ": unknown weighting '" + f[c_weighting] + "'");
    r.weighting = *weighting;
    r.lr = number(f[c_lr], where);
    r.clock_ms = number(f[c_clock], where);
    r.progress = number(f[c_progress], where);
    r.loss = number(f[c_loss], where);
    r.accuracy = number(f[c_acc], where);
    r.train_loss = number(f[c_train], where);
    r.epoch_end = number(f[c_end], where) != 0;
    for (const auto& worker : split(f[c_plan], ';')) {
      const auto parts = split(worker, '/');
      if (parts.size() != 2) throw common::DataError(where + ": plan: expected samples/steps per worker, got '" + worker + "'");
      const double samples = number(parts[0], where), steps = number(parts[1], where);
      // Counts a round can take: -5 samples, 1e300, or steps without samples were fitted as measured.
      const auto count = [](double v) { return v >= 0 && v <= 1e12 && std::floor(v) == v; };
      if (!count(samples) || !count(steps) || (samples == 0) != (steps == 0))
        throw common::DataError(where + ": plan: '" + worker + "': samples and steps are whole numbers in [0, 1e12], both 0 or both above");
      r.workers.push_back({steps, samples});
    }
    if (!(r.loss > 0) || !(e.initial_loss > 0)) throw common::DataError(where + ": a test loss must be > 0");
    // What training can log: a hand-edited or damaged row would be fitted as if it were measured
    // (an accuracy of 7.5, a loss of 1e300, a clock before the start), or fail deep in the fit (a
    // negative lr) without the file's name.
    const auto in_range = [&](const char* column, double v, double lo, double hi) {
      if (!(v >= lo && v <= hi))
        throw common::DataError(where + ": " + column + ": expected a number in [" + common::shortest_number_text(lo) + ", " + common::shortest_number_text(hi) + "], got " +
                                common::shortest_number_text(v));
    };
    in_range("acc_after", r.accuracy, 0, 1);
    in_range("acc_before", e.initial_accuracy, 0, 1);
    in_range("loss_after", r.loss, 0, 1e30);
    in_range("train_loss", r.train_loss, 0, 1e30);
    in_range("clock_ms", r.clock_ms, 0, 1e12);
    in_range("lr", r.lr, 0, 1e3);
    in_range("progress_after", r.progress, 0, 1e15);
    e.rounds.push_back(std::move(r));
  }
}

}  // namespace

std::int64_t RoundLogs::rounds() const {
  std::int64_t n = 0;
  for (const auto& e : episodes) n += static_cast<std::int64_t>(e.rounds.size());
  return n;
}

RoundLogs read_round_logs(const std::vector<std::string>& folders) {
  if (folders.empty()) throw common::DataError("no round log folder given");
  RoundLogs logs;
  for (std::size_t k = 0; k < folders.size(); ++k) {
    const std::string& folder = folders[k];
    if (!std::filesystem::is_directory(folder)) throw common::DataError(folder + ": no such folder");
    for (std::size_t j = 0; j < k; ++j)
      if (std::filesystem::equivalent(folders[j], folder))
        throw common::DataError(folder + ": given twice (as " + folders[j] + "): its episodes would count twice");
    const std::filesystem::path dir(folder);
    env::SurrogateTask task;
    try {
      task = env::task_from_json(read_json(dir / "task.json"));
    } catch (const std::invalid_argument& e) {
      throw common::DataError((dir / "task.json").string() + ": " + e.what());
    }
    const nlohmann::json about = read_json(dir / "log.json");
    if (!about.contains("target_accuracy") || !about["target_accuracy"].is_number())
      throw common::DataError((dir / "log.json").string() + ": target_accuracy: missing");
    const double target = about["target_accuracy"].get<double>();
    if (k == 0) {
      logs.task = task;
      logs.target_accuracy = target;
    } else {
      if (const std::string why = env::task_mismatch(logs.task, task); !why.empty())
        throw common::DataError(folder + ": another workload than " + folders[0] + "'s (" + why + ")");
      if (target != logs.target_accuracy) throw common::DataError(folder + ": another target accuracy than " + folders[0] + "'s");
    }
    std::map<std::int64_t, LoggedEpisode> episodes;
    const auto episode_files = files_of(folder, "episodes-");
    if (episode_files.empty()) throw common::DataError(folder + ": no episodes-*.csv (not a folder written by orchestra surrogate log)");
    RoundCounts counts;
    for (const auto& f : episode_files) read_episodes_file(f, folder, episodes, counts);
    for (const auto& f : files_of(folder, "rounds-")) read_rounds_file(f, episodes);
    for (auto& [id, e] : episodes) {
      // Every episode has all its rounds (a rounds file cut at a line boundary still parses, and a
      // missing one left its episodes out of the fit without a word).
      if (static_cast<std::int64_t>(e.rounds.size()) != counts[id])
        throw common::DataError(folder + ": episode " + std::to_string(id) + " has " + std::to_string(e.rounds.size()) +
                                " rounds in the rounds files, its episodes row says " + std::to_string(counts[id]) +
                                " (a truncated or missing rounds-*.csv?)");
      if (!e.rounds.empty()) logs.episodes.push_back(std::move(e));
    }
    logs.folders.push_back(folder);
  }
  return logs;
}

}  // namespace experiments
