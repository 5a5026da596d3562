#include "experiments/analysis/plot_scripts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "experiments/analysis/gnuplot.hpp"

namespace experiments {
namespace {

std::string num(double v) {
  if (!std::isfinite(v)) return "NaN";  // `set datafile missing 'NaN'` skips it
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

// Settings every figure shares.
std::string preamble(const std::string& title) {
  return std::string(kFigureScriptMarker) + " Render: gnuplot -e \"set terminal pngcairo; set output 'f.png'\" THIS_FILE\n"
         "set datafile missing 'NaN'\n"
         "set grid lc rgb '#dddddd'\n"
         "set border lc rgb '#555555'\n"
         "# " + title + "\n";
}

// A text drawn as written: in gnuplot's enhanced mode "fixed_t" would set "t" as a subscript. The
// terminal stays enhanced because its SVG then titles each series' group with the series' name.
std::string text(const std::string& s) { return gnuplot_quote(s) + " noenhanced"; }

std::string datablock(const std::string& name, const std::string& rows) { return "$" + name + " << EOD\n" + rows + "EOD\n"; }

// Bucket means of a per-round series, so that a long run draws max_points points.
struct Buckets {
  std::size_t size = 1;
  std::size_t count(std::size_t n) const { return (n + size - 1) / size; }
};

Buckets buckets_for(std::size_t rounds, std::size_t max_points) {
  Buckets b;
  if (max_points > 0 && rounds > max_points) b.size = (rounds + max_points - 1) / max_points;
  return b;
}

double bucket_mean(const std::vector<double>& v, std::size_t bucket, const Buckets& b) {
  double sum = 0;
  int n = 0;
  for (std::size_t i = bucket * b.size; i < std::min(v.size(), (bucket + 1) * b.size); ++i)
    if (std::isfinite(v[i])) {
      sum += v[i];
      ++n;
    }
  return n ? sum / n : std::nan("");
}

std::string plot_command(const std::vector<std::string>& parts) {
  std::string s = "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  return s + "\n";
}

// One policy's line in a figure with a line per policy: its x-y rows as datablock $p<index>, its
// plot clause, and its key entry.
void add_policy_line(std::ostringstream& script, Figure& figure, std::vector<std::string>& parts, std::size_t index,
                     const std::string& label, const std::string& rows) {
  const std::string block = "p" + std::to_string(index);
  script << datablock(block, rows);
  parts.push_back("$" + block + " using 1:2 with linespoints pt 7 ps 0.6 lw 2 title " + text(label));
  figure.series.push_back(label);
}

std::string shown_workers(std::size_t shown, std::size_t all) {
  return shown < all ? " (first " + std::to_string(shown) + " of " + std::to_string(all) + " workers)" : std::string();
}

}  // namespace

Figure accuracy_figure(const RunResults& run, const std::string& name) {
  Figure f;
  f.name = name;
  f.title = "Test accuracy vs simulated time: " + run.name;
  std::ostringstream s;
  s << preamble(f.title);
  std::vector<std::string> parts;
  double target = std::nan("");
  for (std::size_t i = 0; i < run.policies.size(); ++i) {
    const PolicyResults& p = run.policies[i];
    if (std::isfinite(p.target_accuracy)) target = p.target_accuracy;
    std::string rows = "0 NaN\n";
    // evals.csv has every evaluation; epochs.csv only the epoch ends (a run without evals.csv).
    if (!p.evals.empty()) {
      rows.clear();
      for (const auto& e : p.evals) rows += num(e.sim_time_s) + " " + num(e.accuracy) + "\n";
    } else if (!p.epoch_rows.empty()) {
      rows.clear();
      for (const auto& e : p.epoch_rows) rows += num(e.sim_time_s) + " " + num(e.accuracy) + "\n";
    }
    add_policy_line(s, f, parts, i, p.label, rows);
  }
  s << "set title " << text(f.title) << "\n"
    << "set xlabel 'simulated time (s)'\nset ylabel 'test accuracy'\nset key bottom right box opaque\n";
  if (std::isfinite(target)) {
    s << "set arrow from graph 0, first " << num(target) << " to graph 1, first " << num(target)
      << " nohead dashtype 2 lc rgb '#888888'\n"
      << "set label " << text("target " + num(100 * target) + "%") << " at graph 0.01, first " << num(target)
      << " offset 0,0.7 tc rgb '#666666'\n";
  }
  if (parts.empty()) parts.push_back("NaN notitle");  // a run without policies still renders
  s << plot_command(parts);
  f.script = s.str();
  return f;
}

Figure epoch_time_figure(const RunResults& run, const std::string& name) {
  Figure f;
  f.name = name;
  f.title = "Simulated time vs epoch (timing only): " + run.name;
  std::ostringstream s;
  s << preamble(f.title);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < run.policies.size(); ++i) {
    const PolicyResults& p = run.policies[i];
    std::string rows = "0 0\n";
    for (const auto& e : p.epoch_rows) rows += num(e.epoch) + " " + num(e.sim_time_s) + "\n";
    add_policy_line(s, f, parts, i, p.label, rows);
  }
  s << "set title " << text(f.title) << "\n"
    << "set xlabel 'epoch'\nset ylabel 'simulated time (s)'\nset key top left box opaque\nset xtics 1\n";
  s << plot_command(parts);
  f.script = s.str();
  return f;
}

Figure iterations_figure(const PolicyResults& policy, const RoundSeries& rounds, const std::string& name,
                         const FigureOptions& options) {
  Figure f;
  f.name = name;
  const std::size_t shown = std::min(options.max_workers, rounds.workers.size());
  const Buckets b = buckets_for(rounds.round.size(), options.max_points);
  f.title = policy.label + ": compute time, batch size and straggler effect per round" + shown_workers(shown, rounds.workers.size());
  const std::string per = b.size > 1 ? " (mean of " + std::to_string(b.size) + " rounds)" : std::string();
  std::ostringstream s;
  s << preamble(f.title);
  for (std::size_t w = 0; w < shown; ++w) {
    std::string rows;
    for (std::size_t k = 0; k < b.count(rounds.round.size()); ++k)
      rows += num(static_cast<double>(rounds.round[k * b.size])) + " " + num(bucket_mean(rounds.workers[w].compute_ms, k, b)) + " " +
              num(bucket_mean(rounds.workers[w].batch_size, k, b)) + "\n";
    s << datablock("w" + std::to_string(w), rows);
    f.series.push_back(rounds.workers[w].name);
  }
  std::string se_rows;
  for (std::size_t k = 0; k < b.count(rounds.round.size()); ++k)
    se_rows += num(static_cast<double>(rounds.round[k * b.size])) + " " + num(bucket_mean(rounds.straggler_effect, k, b)) + "\n";
  s << datablock("se", se_rows.empty() ? "0 NaN\n" : se_rows);
  f.series.push_back("straggler effect");

  auto worker_parts = [&](int column) {
    std::vector<std::string> parts;
    for (std::size_t w = 0; w < shown; ++w)
      parts.push_back("$w" + std::to_string(w) + " using 1:" + std::to_string(column) + " with lines lw 1.5 title " +
                      text(rounds.workers[w].name));
    if (parts.empty()) parts.push_back("NaN notitle");
    return parts;
  };
  s << "set multiplot layout 3,1 title " << text(f.title) << "\n"
    << "set key outside right top\nset lmargin 12\nset rmargin 22\n"
    << "set ylabel " << text("compute time (ms)" + per) << "\nunset xlabel\n"
    << plot_command(worker_parts(2)) << "set ylabel 'local batch size'\n"
    << plot_command(worker_parts(3)) << "set ylabel 'straggler effect (LBB Eq. 4)'\nset xlabel 'round'\nset yrange [0:*]\n"
    << plot_command({"$se using 1:2 with lines lw 1.5 lc rgb '#aa0000' title 'straggler effect'"}) << "unset multiplot\n";
  f.script = s.str();
  return f;
}

Figure barrier_figure(const PolicyResults& policy, const RoundSeries& rounds, const std::string& name,
                      const FigureOptions& options) {
  Figure f;
  f.name = name;
  const std::size_t shown = std::min(options.max_workers, rounds.workers.size());
  f.title = policy.label + ": barrier T and local steps tau_n per epoch" + shown_workers(shown, rounds.workers.size());
  // Means over each epoch's rounds; epochs in rounds.csv count from 0, the figure from 1 like epochs.csv.
  struct Sum {
    double t = 0;
    int t_n = 0;
    std::vector<double> tau;
    std::vector<int> tau_n;
  };
  std::map<int, Sum> epochs;
  for (std::size_t r = 0; r < rounds.round.size(); ++r) {
    Sum& e = epochs[rounds.epoch[r]];
    e.tau.resize(shown, 0);
    e.tau_n.resize(shown, 0);
    if (std::isfinite(rounds.barrier_ms[r])) {
      e.t += rounds.barrier_ms[r];
      ++e.t_n;
    }
    for (std::size_t w = 0; w < shown; ++w)
      if (std::isfinite(rounds.workers[w].local_steps[r])) {
        e.tau[w] += rounds.workers[w].local_steps[r];
        ++e.tau_n[w];
      }
  }
  std::string rows;
  for (const auto& [epoch, e] : epochs) {
    rows += std::to_string(epoch + 1) + " " + num(e.t_n ? e.t / e.t_n : std::nan(""));
    for (std::size_t w = 0; w < shown; ++w) rows += " " + num(e.tau_n[w] ? e.tau[w] / e.tau_n[w] : std::nan(""));
    rows += "\n";
  }
  std::ostringstream s;
  s << preamble(f.title) << datablock("epochs", rows.empty() ? "1 NaN\n" : rows);
  f.series.push_back("T");
  std::vector<std::string> tau_parts;
  for (std::size_t w = 0; w < shown; ++w) {
    tau_parts.push_back("$epochs using 1:" + std::to_string(w + 3) + " with linespoints pt 7 ps 0.7 lw 1.5 title " +
                        text("tau " + rounds.workers[w].name));
    f.series.push_back("tau " + rounds.workers[w].name);
  }
  if (tau_parts.empty()) tau_parts.push_back("NaN notitle");
  s << "set multiplot layout 2,1 title " << text(f.title) << "\n"
    << "set key outside right top\nset lmargin 12\nset rmargin 24\nset xtics 1\n"
    << "set ylabel 'barrier T (ms)'\nunset xlabel\n"
    << plot_command({"$epochs using 1:2 with linespoints pt 7 ps 0.8 lw 2 lc rgb '#0060ad' title 'T'"})
    << "set ylabel 'local steps tau_n' noenhanced\nset xlabel 'epoch'\n" << plot_command(tau_parts) << "unset multiplot\n";
  f.script = s.str();
  return f;
}

namespace {

constexpr std::size_t kMaxTimelinePanels = 6;
constexpr std::size_t kMaxTimelineLanes = 8;  // workers per panel, more would be lines a pixel high
constexpr double kTimelineRounds = 3;       // rounds of the slowest-rounding policy in the window
constexpr double kTimelineMaxRounds = 100;  // at most this many of the fastest (an SVG stays small)

double median_round_ms(const RoundSeries& r) {
  std::vector<double> v;
  for (const double ms : r.round_ms)
    if (std::isfinite(ms) && ms > 0) v.push_back(ms);
  if (v.empty()) return std::nan("");
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

bool has_round_times(const RoundSeries& r) { return std::isfinite(median_round_ms(r)) && !r.clock_ms.empty(); }

}  // namespace

Figure timeline_figure(const std::vector<TimelinePanel>& all_panels, const std::string& run_name, const std::string& name,
                       const FigureOptions& options) {
  Figure f;
  f.name = name;
  std::vector<TimelinePanel> panels;
  for (const auto& p : all_panels)
    if (p.rounds && has_round_times(*p.rounds) && panels.size() < kMaxTimelinePanels) panels.push_back(p);
  double longest = 0, shortest = INFINITY, span = INFINITY;
  for (const auto& p : panels) {
    const double m = median_round_ms(*p.rounds);
    longest = std::max(longest, m);
    shortest = std::min(shortest, m);
    const double start = p.rounds->clock_ms.front() - p.rounds->round_ms.front();
    span = std::min(span, p.rounds->clock_ms.back() - start);
  }
  const double window_ms = panels.empty() ? 1000.0 : std::max(1.0, std::min({kTimelineRounds * longest, kTimelineMaxRounds * shortest, std::max(span, longest)}));
  char window[32];
  std::snprintf(window, sizeof window, "%.3g", window_ms / 1000.0);
  f.title = "Where the time goes: the first " + std::string(window) + " s of each policy, per worker: " + run_name;
  if (panels.size() < all_panels.size())
    f.title += " (" + std::to_string(panels.size()) + " of " + std::to_string(all_panels.size()) + " policies)";
  std::ostringstream s;
  s << preamble(f.title);
  const char* kinds[] = {"compute", "idle at the barrier", "communication"};
  const char* colors[] = {"#4caf50", "#c8c8c8", "#e53935"};
  for (const char* k : kinds) f.series.push_back(k);
  // Margins by hand (screen fractions) leave a band under the title for the one key; the space
  // between panels (for a title and tic labels) shrinks when there are many.
  const double spacing = panels.size() > 1 ? std::min(0.115, 0.35 / static_cast<double>(panels.size() - 1)) : 0.0;
  s << "set multiplot layout " << std::max<std::size_t>(panels.size(), 1) << ",1 title " << text(f.title)
    << " margins 0.15,0.97,0.08,0.86 spacing 0," << num(spacing) << "\n"
    << "set xrange [0:" << num(window_ms / 1000.0) << "]\nunset grid\nset grid xtics lc rgb '#eeeeee'\n"
    << "set style fill solid 1.0 noborder\nset tics nomirror\n";
  if (panels.empty()) s << plot_command({"NaN notitle"});
  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const RoundSeries& r = *panels[pi].rounds;
    const std::size_t lanes = std::min({options.max_workers, kMaxTimelineLanes, r.workers.size()});
    const double t0 = r.clock_ms.front() - r.round_ms.front();
    std::string rows[3];
    for (std::size_t k = 0; k < r.round.size(); ++k) {
      const double end = r.clock_ms[k] - t0, length = r.round_ms[k];
      if (!std::isfinite(end) || !std::isfinite(length)) continue;
      const double start = end - length;
      if (start >= window_ms) break;
      const double comm = std::isfinite(r.comm_ms[k]) ? r.comm_ms[k] : 0.0;
      for (std::size_t w = 0; w < lanes; ++w) {
        const double compute = r.workers[w].compute_ms[k], idle = r.workers[w].idle_ms[k];
        const double y = static_cast<double>(lanes - 1 - w);  // the first worker on top
        // Each box: x centre, y, half width, half height (boxxyerror), in seconds.
        const auto box = [&](std::string& out, double from, double ms) {
          if (!(ms > 0) || !std::isfinite(ms)) return;
          out += num((start + from + ms / 2) / 1000.0) + " " + num(y) + " " + num(ms / 2000.0) + " 0.38\n";
        };
        box(rows[0], 0, compute);
        box(rows[1], std::isfinite(compute) ? compute : 0, idle);
        box(rows[2], length - comm, comm);
      }
    }
    std::string ytics;
    for (std::size_t w = 0; w < lanes; ++w)
      ytics += (w ? ", " : "") + gnuplot_quote(r.workers[w].name) + " " + std::to_string(lanes - 1 - w);
    s << "set title " << text(panels[pi].label + (panels[pi].note.empty() ? "" : ": " + panels[pi].note) + shown_workers(lanes, r.workers.size()))
      << "\n"
      << "set ytics (" << ytics << ") noenhanced\nset yrange [-0.6:" << num(static_cast<double>(lanes) - 0.4) << "]\n"
      << (pi + 1 == panels.size() ? "set xlabel 'time since the first round (s)'\n" : "unset xlabel\n")
      // One key for all panels, under the figure's title, where it takes no panel's room.
      << (pi == 0 ? "set key at screen 0.5, screen 0.93 center center horizontal maxrows 1 maxcols 3 samplen 2 width 1\n" : "unset key\n");
    std::vector<std::string> parts;
    for (int k = 0; k < 3; ++k) {
      const std::string block = "t" + std::to_string(pi) + "k" + std::to_string(k);
      s << datablock(block, rows[k].empty() ? "NaN NaN NaN NaN\n" : rows[k]);
      parts.push_back("$" + block + " using 1:2:3:4 with boxxyerror lc rgb '" + colors[k] + "' title " + text(kinds[k]));
    }
    s << plot_command(parts);
  }
  s << "unset multiplot\n";
  f.script = s.str();
  return f;
}

Figure training_figure(const common::CsvTable& train, const std::string& name) {
  Figure f;
  f.name = name;
  f.title = "A3C training: " + train.source;
  // Against episodes, the experience trained on: an update is one rollout of today's agents but K
  // of an agent with a3c.envs_per_agent K, so updates would not compare runs (files without the
  // column: the first one). Counters (episodes done, messages dropped) only grow; the curves are
  // the other columns.
  std::size_t x = 0;
  for (std::size_t c = 0; c < train.columns.size(); ++c)
    if (train.columns[c] == "episodes") x = c;
  std::vector<std::size_t> ys;
  for (std::size_t c = 1; c < train.columns.size(); ++c)
    if (c != x && train.columns[c] != "episodes" && train.columns[c] != "dropped") ys.push_back(c);
  if (ys.empty() && train.columns.size() > 1) ys.push_back(x == 1 ? 0 : 1);
  if (ys.size() > 4) ys.resize(4);  // more panels would be unreadable
  std::string rows;
  for (std::size_t r = 0; r < train.rows.size(); ++r) {
    rows += num(train.number(r, x));
    for (const auto c : ys) rows += " " + num(train.number(r, c));
    rows += "\n";
  }
  std::ostringstream s;
  s << preamble(f.title) << datablock("train", rows.empty() ? "0 NaN\n" : rows);
  s << "set multiplot layout " << std::max<std::size_t>(ys.size(), 1) << ",1 title " << text(f.title) << "\n"
    << "set key top left\nset lmargin 12\n";
  if (ys.empty()) s << plot_command({"NaN notitle"});
  for (std::size_t i = 0; i < ys.size(); ++i) {
    const std::string& column = train.columns[ys[i]];
    s << "set ylabel " << text(column) << "\n";
    if (i + 1 == ys.size()) s << "set xlabel " << text(train.columns[x]) << "\n";
    s << plot_command({"$train using 1:" + std::to_string(i + 2) + " with lines lw 2 title " + text(column)});
    f.series.push_back(column);
  }
  s << "unset multiplot\n";
  f.script = s.str();
  return f;
}

}  // namespace experiments

namespace experiments {

Figure evaluation_figure(const EvaluationSummary& summary, const std::string& name) {
  Figure f;
  f.name = name;
  f.title = "Time to target over the oracle's (best static T), per cluster";
  std::ostringstream s;
  s << preamble(f.title);
  // Columns: cluster label, then one ratio per controller (the overall row last).
  std::vector<std::string> controllers;
  for (const auto& c : summary.overall) controllers.push_back(c.controller);
  const auto row = [&](const std::string& label, const std::vector<ControllerScore>& scores) {
    // Data columns group on double quotes only (a single-quoted label with spaces would split).
    std::string quoted = "\"";
    for (const char c : label) quoted += c == '"' ? '\'' : c;
    std::string line = quoted + "\"";
    for (const auto& controller : controllers) {
      double ratio = std::nan("");
      for (const auto& score : scores)
        if (score.controller == controller && score.geomean_ratio > 0) ratio = score.geomean_ratio;
      line += " " + num(ratio);
    }
    return line + "\n";
  };
  std::string rows;
  double lowest = 1.0;  // the y axis starts at a power of 2 below every bar, at most 1/2
  for (const auto& c : summary.clusters)
    for (const auto& score : c.controllers)
      if (score.geomean_ratio > 0) lowest = std::min(lowest, score.geomean_ratio);
  for (const auto& cluster : summary.clusters) {
    std::string label = cluster.cluster;
    int misses = 0;  // which controller missed where: evaluation.md
    for (const auto& score : cluster.controllers) misses += score.misses;
    if (misses > 0) label += " (" + std::to_string(misses) + (misses == 1 ? " miss)" : " misses)");
    rows += row(label, cluster.controllers);
  }
  rows += row("geometric mean", summary.overall);
  s << datablock("ratios", rows);
  s << "set title " << text(f.title) << "\n"
    << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
    << "set logscale y\nset yrange [" << num(std::pow(2.0, std::floor(std::log2(std::min(lowest, 0.5))))) << ":*]\nset ylabel 'time to target / oracle (log; 1 = best static T)'\n"
    << "set xtics rotate by 20 right noenhanced\nset key top left box opaque\nset bmargin 6\nset lmargin 12\n"
    << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lc rgb '#444444'\n";
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < controllers.size(); ++i) {
    parts.push_back(std::string(i ? "''" : "$ratios") + " using " + std::to_string(i + 2) + (i ? "" : ":xtic(1)") + " title " + text(controllers[i]));
    f.series.push_back(controllers[i]);
  }
  if (parts.empty()) parts.push_back("NaN notitle");
  s << plot_command(parts);
  f.script = s.str();
  return f;
}

Figure barrier_vs_oracle_figure(const std::vector<BarrierTrace>& traces, const std::string& controller, const std::string& name) {
  Figure f;
  f.name = name;
  f.title = controller + "'s barrier T against the oracle's static T";
  std::ostringstream s;
  s << preamble(f.title);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const BarrierTrace& t = traces[i];
    std::string rows;
    const std::size_t n = std::min(t.clock_s.size(), t.barrier_ms.size());
    for (std::size_t k = 0; k < n; ++k)
      if (t.oracle_barrier_ms > 0 && t.oracle_time_s > 0 && t.barrier_ms[k] > 0)
        rows += num(t.clock_s[k] / t.oracle_time_s) + " " + num(t.barrier_ms[k] / t.oracle_barrier_ms) + "\n";
    if (rows.empty()) rows = "0 NaN\n";
    const std::string block = "c" + std::to_string(i);
    s << datablock(block, rows);
    parts.push_back("$" + block + " using 1:2 with steps lw 2 title " + text(t.cluster));
    f.series.push_back(t.cluster);
  }
  s << "set title " << text(f.title) << "\n"
    << "set logscale y 2\nset xlabel 'simulated time / oracle time to target'\nset ylabel 'T / oracle T (log 2)'\n"
    << "set key outside right box opaque\n"
    << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lc rgb '#444444'\n"
    << "set arrow from first 1, graph 0 to first 1, graph 1 nohead dashtype 3 lc rgb '#888888'\n";
  if (parts.empty()) parts.push_back("NaN notitle");
  s << plot_command(parts);
  f.script = s.str();
  return f;
}

}  // namespace experiments
