#include "experiments/report/html_report.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "experiments/analysis/comparison.hpp"
#include "experiments/analysis/explanation.hpp"
#include "experiments/analysis/seed_stats.hpp"
#include "experiments/report/html_blocks.hpp"

#ifndef ORCHESTRA_VERSION
#error "ORCHESTRA_VERSION is set by experiments/report/CMakeLists.txt from the project's version"
#endif

namespace experiments {
namespace {

// Plain, printable, and no '<' anywhere: the page stays well-formed XML as well as HTML.
const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #222;
       max-width: 1100px; margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.8em; }
.meta { color: #666; margin-top: 0; }
.story { background: #f4f8f4; border-left: 4px solid #4caf50; padding: 0.6em 1em; }
.story p { margin: 0.3em 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
table.comparison td:not(.num), table.seed-summary td:not(.num) { white-space: nowrap; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f2f2f2; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
td code { overflow-wrap: anywhere; font-size: 0.9em; }
pre { background: #f7f7f7; border: 1px solid #e4e4e4; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
footer { color: #888; font-size: 0.85em; margin-top: 3em; border-top: 1px solid #eee; padding-top: 0.6em; }
)";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::DataError(path + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A policy's config.json: the resolved experiment config with the policy's parameters under
// "policy"; null for a folder without one (written by hand, or by an older version).
nlohmann::json config_of(const PolicyResults& p) {
  const std::string path = p.dir + "/config.json";
  if (!std::filesystem::exists(path)) return nullptr;
  return common::read_json_file(path);
}

std::string number(double v, const char* pattern) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, v);
  return buf;
}

std::string seeds_text(const std::vector<std::string>& seeds) {
  std::string text;
  for (std::size_t i = 0; i < seeds.size(); ++i) text += (i ? ", " : "") + seeds[i];
  return text;
}

std::string figure_html(const DrawnFigure& f, std::size_t index) {
  const std::string id = "fig-" + file_name_part(f.name);
  return "<figure id=\"" + html_escape(id) + "\">\n" + inline_svg(read_file(f.svg), "f" + std::to_string(index) + "-", f.title) +
         "\n<figcaption>" + html_escape(f.title) + " (plots/" + html_escape(std::filesystem::path(f.png).filename().string()) +
         ", with its .svg and its gnuplot script)</figcaption>\n</figure>\n";
}

}  // namespace

std::string toolkit_version() { return ORCHESTRA_VERSION; }

std::string html_report(const ReportInput& in) {
  const bool seeds = is_seed_folder(in.runs);
  std::string title = in.runs.size() == 1 ? in.runs.front().name : std::filesystem::path(in.source).filename().string();
  if (title.empty() || title == ".") title = in.source;

  // Seeds, clock and target, from what each run wrote.
  std::vector<std::string> seed_list;
  std::set<std::string> clocks;
  std::set<std::string> targets;
  std::vector<nlohmann::json> configs;  // each run's first policy's config.json
  for (const auto& run : in.runs) {
    configs.push_back(run.policies.empty() ? nlohmann::json() : config_of(run.policies.front()));
    if (configs.back().is_object() && configs.back().contains("seed")) seed_list.push_back(configs.back()["seed"].dump());
    for (const auto& p : run.policies) {
      clocks.insert(std::string(env::clock_name(p.clock)) + " clock");
      if (std::isfinite(p.target_accuracy)) targets.insert("target " + number(100.0 * p.target_accuracy, "%.1f%%"));
    }
  }
  std::string meta = "Orchestra toolkit " + toolkit_version();
  for (const auto& c : clocks) meta += " · " + c;
  meta += seed_list.size() == 1 ? " · seed " + seed_list.front() : seed_list.empty() ? "" : " · seeds " + seeds_text(seed_list);
  for (const auto& t : targets) meta += " · " + t;

  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
    << kReportGenerator << " " << html_escape(toolkit_version()) << "\"/>\n"
    << "<title>" << html_escape(title) << ": Orchestra report</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n"
    << "<header>\n<h1>" << html_escape(title) << "</h1>\n<p class=\"meta\">" << html_escape(meta) << "</p>\n</header>\n";

  // Who wins and why.
  std::vector<std::string> story;
  if (seeds) {
    story.push_back(explain_seeds(seed_rows(in.runs)));
  } else {
    for (const auto& run : in.runs) {
      if (run.policies.empty()) continue;
      const Explanation e = explain_run(run);
      const std::string prefix = in.runs.size() > 1 ? run.name + ": " : std::string();
      story.push_back(prefix + e.result);
      story.push_back(prefix + e.why);
    }
  }
  if (!story.empty() && !story.front().empty()) {
    h << "<section id=\"summary\" class=\"story\">\n";
    for (const auto& line : story) h << "<p>" << html_escape(line) << "</p>\n";
    h << "</section>\n";
  }

  // The tables, as the terminal printed them.
  const std::vector<ComparisonRow> rows = comparison_rows(in.runs);
  h << "<section id=\"tables\">\n<h2>Results</h2>\n";
  if (seeds) {
    h << "<h3>Over " << in.runs.size() << " seeds (mean ± 95% CI)</h3>\n<div class=\"scroll\">\n"
      << html_table(seed_markdown(seed_rows(in.runs)), "seed-summary") << "</div>\n<h3>Every seed</h3>\n";
  }
  if (!rows.empty()) h << "<div class=\"scroll\">\n" << html_table(comparison_markdown(rows), "comparison") << "</div>\n";
  else h << "<p>No policy results (only A3C training logs).</p>\n";
  h << "</section>\n";

  // The figures, grouped by run.
  h << "<section id=\"figures\">\n<h2>Figures</h2>\n";
  if (in.figures.empty()) h << "<p>No figures.</p>\n";
  std::string group;
  for (std::size_t i = 0; i < in.figures.size(); ++i) {
    const DrawnFigure& f = in.figures[i];
    if (in.runs.size() > 1 && f.run != group) h << "<h3>" << html_escape(f.run) << "</h3>\n";
    group = f.run;
    h << figure_html(f, i);
  }
  h << "</section>\n";

  // What was run: parameters per policy and the resolved config.
  h << "<section id=\"config\">\n<h2>Configuration</h2>\n";
  if (!seed_list.empty()) h << "<p>Seed" << (seed_list.size() > 1 ? "s" : "") << ": " << html_escape(seeds_text(seed_list)) << "</p>\n";
  for (std::size_t r = 0; r < in.runs.size(); ++r) {
    const RunResults& run = in.runs[r];
    if (run.policies.empty()) continue;
    if (seeds && r > 0) break;  // every seed ran the same config but its seed
    if (in.runs.size() > 1) h << "<h3>" << html_escape(seeds ? "every seed (as " + run.name + " ran it)" : run.name) << "</h3>\n";
    h << "<table class=\"policies\">\n<thead><tr><th>policy</th><th>kind</th><th>parameters</th></tr></thead>\n<tbody>\n";
    for (const auto& p : run.policies) {
      const nlohmann::json config = config_of(p);
      const bool known = config.is_object() && config.contains("policy");
      h << "<tr><td>" << html_escape(p.label) << "</td><td>" << html_escape(p.policy) << "</td><td><code>"
        << html_escape(known ? config["policy"].dump() : std::string("(no config.json)")) << "</code></td></tr>\n";
    }
    h << "</tbody>\n</table>\n";
    nlohmann::json resolved = configs[r];
    if (!resolved.is_object()) {
      h << "<p>No config.json in " << html_escape(run.policies.front().label) << "/: the resolved config is unknown.</p>\n";
      continue;
    }
    resolved.erase("policy");
    h << "<p>The resolved config (every default filled in), from " << html_escape(run.policies.front().label)
      << "/config.json:</p>\n<pre class=\"config\">" << html_escape(resolved.dump(2)) << "</pre>\n";
  }
  h << "</section>\n";

  h << "<footer>Made by <code>orchestra compare " << html_escape(in.source) << " --html</code> with the Orchestra toolkit "
    << html_escape(toolkit_version()) << ". Self-contained: no scripts and nothing fetched; the figures' PNG, SVG and gnuplot "
    << "scripts are in plots/ beside this file.</footer>\n</body>\n</html>\n";
  return h.str();
}

}  // namespace experiments
