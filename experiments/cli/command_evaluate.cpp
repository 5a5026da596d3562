// `orchestra evaluate`: a trained barrier policy against orchestra-lcm, a random controller and the
// best static barrier of a sweep, on held-out clusters and seeds (experiments/runner/evaluation.hpp).
#include <algorithm>
#include <iostream>

#include "common/limits.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/runner/evaluation.hpp"

namespace experiments {
namespace {

const char* kEvaluateHelp = R"(usage: orchestra evaluate POLICY.pt... CONFIG... [--seeds LIST] [--sweep N | --sweep-ms LIST] [--also ENTRY]... [--epochs N] [--target A] [--out DIR] [--jobs N] [--plot] [--overwrite] [--quiet]
       orchestra evaluate POLICY.pt... --baselines-from EARLIER [--also ENTRY]... [--out DIR] [--jobs N] [--plot] [--quiet]

Judges trained barrier policies on cluster configs: on each config and seed it runs every policy
(orchestra-a3c), orchestra-lcm, a random controller (the first policy's moves at random, from
where it starts: the plan, in its bounds around it, for a policy that starts there) and a
log-spaced sweep of static barriers (fixed-t), each to the config's target accuracy, and writes
DIR/evaluation.md and .csv: per cluster each controller's time to target over the oracle's (the
best static T of the sweep for that cluster and seed), as a geometric mean over seeds, misses
counted, and the geometric mean over clusters. Beside them, fixed-t-other-seeds: on each seed
the sweep's T that did best on the cluster's other seeds, a static T tuned without hindsight
(its gap to 1.00x is the oracle's advantage of choosing on the seed it scores), and the ceiling
of any static T: each cluster's one sweep T that did best over all its seeds, in hindsight.
Under the table: each geometric mean over clusters with its 95% confidence interval, and each
controller's time over orchestra-lcm's and over fixed-t-other-seeds', paired cluster by cluster,
with theirs; where several policies or --also entries are judged, also over the first policy's
(also in DIR/evaluation_overall.csv).
Results of every run are kept in DIR/<cluster>/seed-<N>/<controller>/.

  --seeds LIST    seeds (1,2,3 or 1-5; default 1-3)
  --sweep N       static barriers in the sweep, log-spaced from the slowest worker's batch time
                  to 64 times it (default 8)
  --sweep-ms LIST the sweep's T values in ms instead (e.g. 100,200,400)
  --also ENTRY    one more controller judged beside the policies, as a YAML policy entry, e.g.
                  '{name: fixed-t, label: t-is-comm, T_x_comm: 1}' (T = the all-reduce time) or
                  dsgd or planned-t (a static T planned on the surrogate of training before the
                  run); a fixed-t or planned-t without interval: gets the first policy's, as the
                  sweep does (planned-t then plans the very sweep `orchestra surrogate pick` runs)
  --epochs N      every config's training.epochs replaced by N (the budget a run that misses ends at)
  --target A      every config's training.target_accuracy replaced by A (0 < A <= 1): the same
                  clusters judged to another target, e.g. near the model's plateau; each
                  DIR/<cluster>/evaluate.yaml records the workload that ran
  --out DIR       where to write (default results/evaluate)
  --jobs N        seeds run at once in separate processes (default 1; same files)
  --baselines-from EARLIER
                  judge the policies on an earlier evaluation's clusters, seeds and sweep: only
                  the policies (and --also entries) run; orchestra-lcm's, the random
                  controller's and the sweep's runs are copied from EARLIER (their summary.json
                  gains copied_from). The earlier sweep must have used the first policy's move
                  and decision interval; the policies run on its workload (no --epochs, --target).
                  The tables are those a full evaluation would write
  --plot          DIR/plots/evaluation.png (each controller over the oracle, per cluster) and
                  barrier_vs_oracle.png (the first policy's T against the oracle's T), with SVGs
  --overwrite     DIR holds another evaluation's or experiment's results: remove them (only
                  those folders) instead of refusing
  --quiet         no progress output (progress goes to stderr; ORCHESTRA_PROGRESS_EVERY_S sets
                  the interval of its lines when stderr is not a terminal)

example:
  orchestra evaluate pretrained/orchestra-a3c.pt configs/heldout/*.yaml --seeds 1-3 --jobs 2
  orchestra evaluate runs/*/policy.pt --baselines-from results/evaluate --out results/candidates
  orchestra evaluate pretrained/orchestra-a3c.pt configs/heldout/*.yaml --epochs 10 --target 0.86 --out results/plateau
)";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<double> parse_ms_list(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::optional<double> v = parse_whole_number(item);
    if (!v || !(*v > 0) || !(*v <= common::kStepMs.max * common::kMaxLocalSteps))
      throw UsageError(flag + ": expected positive ms separated by commas, got '" + item + "'");
    // Each value is a run under its own label (fixed-t-T_ms=<value>): twice is one folder for two runs.
    if (std::find(out.begin(), out.end(), *v) != out.end()) throw UsageError(flag + ": " + item + " is listed twice");
    out.push_back(*v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int command_evaluate(const Args& args) {
  EvaluateOptions options;
  bool seeds_given = false, sweep_given = false, points_given = false, ms_given = false;
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kEvaluateHelp;
      return 0;
    } else if (a == "--seeds") {
      options.seeds = parse_seed_list("--seeds", arg.value());
      seeds_given = true;
    } else if (a == "--sweep") {
      options.sweep_points = static_cast<int>(arg.integer(1, 64));
      sweep_given = points_given = true;
    } else if (a == "--sweep-ms") {
      options.sweep_ms = parse_ms_list("--sweep-ms", arg.value());
      sweep_given = ms_given = true;
    } else if (a == "--out") {
      options.out_dir = arg.value();
    } else if (a == "--jobs") {
      options.jobs = static_cast<int>(arg.integer(1, 256));
    } else if (a == "--also") {
      options.also.push_back(arg.repeatable_value());
    } else if (read_workload_flag(arg, options.workload)) {
      // --epochs, --target
    } else if (a == "--baselines-from") {
      options.baselines_from = arg.value();
    } else if (a == "--quiet") {
      options.quiet = true;
    } else if (a == "--plot") {
      options.plot = true;
    } else if (a == "--overwrite") {
      options.overwrite = true;
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a);
    } else if (ends_with(a, ".pt")) {
      options.policies.push_back(a);
    } else {
      options.configs.push_back(a);
    }
  }
  if (points_given && ms_given) throw UsageError("--sweep and --sweep-ms: give one (a number of points, or the points themselves)");
  if (!options.baselines_from.empty()) {
    // The earlier evaluation fixes what the baselines ran on.
    if (!options.configs.empty()) throw UsageError("--baselines-from takes the clusters from " + options.baselines_from + ": give no CONFIG files");
    if (seeds_given || sweep_given) throw UsageError("--baselines-from takes the seeds and the sweep from " + options.baselines_from + ": drop --seeds, --sweep and --sweep-ms");
    if (options.policies.empty()) throw UsageError("needs POLICY.pt files");
  } else if (options.policies.empty() || options.configs.empty()) {
    throw UsageError("needs POLICY.pt and CONFIG.yaml files");
  }
  const EvaluationResult result = run_evaluation(options);
  std::cout << evaluation_markdown(result.summary) << "results: " << result.out_dir
            << "/ (evaluation.md, evaluation.csv, evaluation_overall.csv)\n";
  if (!result.figures.empty()) std::cout << "Figures: " << result.out_dir << "/plots/evaluation.png, " << result.out_dir << "/plots/barrier_vs_oracle.png (and SVGs)\n";
  return 0;
}

}  // namespace experiments
