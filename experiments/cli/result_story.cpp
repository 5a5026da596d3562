#include "experiments/cli/result_story.hpp"

#include <algorithm>

#include "experiments/analysis/explanation.hpp"
#include "experiments/analysis/seed_stats.hpp"

namespace experiments {
namespace {

// The figures a first look wants: each run's accuracy (or time per epoch) and its timeline.
bool headline(const DrawnFigure& f) {
  for (const char* name : {"accuracy_vs_time", "time_vs_epoch", "timeline"}) {
    const std::string n = name;
    if (f.name == n || (f.name.size() > n.size() && f.name.compare(f.name.size() - n.size() - 1, n.size() + 1, "." + n) == 0))
      return true;
  }
  return false;
}

}  // namespace

std::vector<RunResults> results_of_run(const std::string& out_dir, const std::vector<PolicyOutcome>& outcomes) {
  std::vector<RunResults> runs = read_results({out_dir});
  for (auto& run : runs)
    run.policies.erase(std::remove_if(run.policies.begin(), run.policies.end(),
                                      [&](const PolicyResults& p) {
                                        return std::none_of(outcomes.begin(), outcomes.end(), [&](const PolicyOutcome& o) { return o.label == p.label; });
                                      }),
                       run.policies.end());
  return runs;
}

std::string story_after_table(const std::vector<RunResults>& runs, const std::string& results_dir, const PlotReport* plots,
                              const std::string& report_html) {
  std::string text;
  if (is_seed_folder(runs)) {
    text += explain_seeds(seed_rows(runs)) + "\n";
  } else {
    for (const auto& run : runs) {
      if (run.policies.empty()) continue;
      const Explanation e = explain_run(run);
      const std::string prefix = runs.size() > 1 ? run.name + ": " : std::string();
      text += prefix + e.result + "\n" + prefix + e.why + "\n";
    }
  }
  if (plots && !plots->figures.empty()) {
    std::string shown;
    for (const auto& f : plots->figures)  // the first run's: with several seeds, the rest are alike
      if (headline(f) && f.run == plots->figures.front().run) shown += (shown.empty() ? "" : ", ") + f.png;
    text += "Figures: " + (shown.empty() ? plots->figures.front().png : shown) + " (" + std::to_string(plots->figures.size()) +
            " figures, PNG and SVG, in " + results_dir + "/plots/" +
            (report_html.empty() ? "; orchestra compare " + results_dir + " --html makes one page to share" : std::string()) + ")\n";
  } else if (!plots) {
    text += "Figures: orchestra compare " + results_dir + " --plot draws them into " + results_dir + "/plots/; --html writes one report.html to share\n";
  }
  if (!report_html.empty()) text += "Report: " + report_html + " (one self-contained page: open it in a browser, or send it)\n";
  return text;
}

}  // namespace experiments
