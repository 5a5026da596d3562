// `orchestra surrogate log|fit|calibrate|fidelity|pick|hardest`: the surrogate of training (env/surrogate/)
// is made from rounds of real training (log), fitted and chosen on held-out episodes (fit), its
// drift penalty corrected on real static sweeps of validation clusters (calibrate), and judged
// against real training on clusters it was not fitted on (fidelity); on it, a static T per cluster
// is picked before any real run (pick), and the clusters where a policy trails the best static T
// the most are found for the next training stage (hardest).
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sstream>
#include <vector>
#include <string>

#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/runner/hardest_clusters.hpp"
#include "experiments/runner/train_config.hpp"
#include "common/atomic_file.hpp"
#include "common/json_file.hpp"
#include "common/own_output.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "experiments/surrogate/fidelity_run.hpp"
#include "experiments/surrogate/surrogate_pick.hpp"
#include "experiments/surrogate/logged_episodes.hpp"
#include "experiments/surrogate/round_log.hpp"
#include "experiments/surrogate/surrogate_calibration.hpp"
#include "experiments/surrogate/surrogate_fit.hpp"
#include "experiments/surrogate/surrogate_replay.hpp"

namespace experiments {
namespace {

const char* kSurrogateHelp = R"(usage: orchestra surrogate log TRAIN_CONFIG [--episodes N] [--first K] [--seed S] [--out DIR] [--quiet]
       orchestra surrogate fit LOG_DIR... [--out FILE] [--forms progress-noise,sample-clock] [--quiet]
       orchestra surrogate calibrate SURROGATE.json CONFIG... [--real DIR]... [--scales LIST] [--steps-gains LIST] [--out FILE] [--work DIR]
       orchestra surrogate fidelity SURROGATE.json CONFIG... [--seeds 1-3] [--jobs N] [--real DIR]... [--out DIR] [--overwrite]
       orchestra surrogate pick SURROGATE.json CONFIG... [--seeds 101-110] [--jobs N] [--real DIR]... [--out DIR] [--overwrite]
       orchestra surrogate hardest POLICY.pt TRAIN_CONFIG [--candidates N] [--keep K] [--seed S] [--out FILE]

The surrogate of training: a fitted model of how the global model's test loss and accuracy move in
one round of local SGD, given what the round did, so that the barrier-tuning RL environment runs
at microseconds per round (README, "The surrogate of training").

  log TRAIN_CONFIG   real training (libtorch) on clusters drawn from the training config's
                     distribution, under static and randomly moved barriers, the test set evaluated
                     after every round; one CSV row per round in DIR/rounds-*.csv, one per episode
                     in DIR/episodes-*.csv, the workload in DIR/task.json
      --episodes N   episodes to run (default 100)
      --first K      the first episode's index (default 0): two processes given disjoint ranges
                     fill one folder; chunks already written are skipped, so a rerun resumes
                     (only the same log: another task, --seed or --chunk over them is refused)
      --seed S       episode k's seed is derived from (S, k) (default 1)
      --chunk C      episodes per file (default 25)
      --after-target E   epochs run past the first evaluation at the target (default 0.5)
      --out DIR      (default results/surrogate-log)

  fit LOG_DIR...      fits the surrogate's forms (env/surrogate/surrogate_model.hpp) on the logged
                     episodes, judges each on every 5th episode held out (time to target, loss and
                     accuracy along the path), refits the best on all and writes it as JSON
      --out FILE     (default surrogate.json)
      --forms LIST   the forms to try (default progress-noise,sample-clock)
      --holdout-every K   hold out episodes whose index is a multiple of K (default 5)
      --draws D      stochastic replays per held-out episode (default 16)
      --iterations I Levenberg-Marquardt iterations per fit (default 60)
      --target-weight W  weight of the rounds near the target accuracy in the path's fit (default 3)
      --training-limit N fit on the first N training episodes only (how the fit grows with data)
      --judge FILE   fit nothing: print how well the surrogate FILE predicts the held-out episodes
                     ("out_of_sample": false, and a line on stderr unless --quiet, where FILE
                     was fitted on these logs: its final fit used every episode)
      --paths CSV    with --judge: every logged round beside the surrogate's expected path

  calibrate SURROGATE.json CONFIG...
                     the fitted surrogate with its replicas' drift measured in units SCALE times
                     larger (both drift scales of env/surrogate/surrogate_model.hpp), for each
                     SCALE of a grid judged as fidelity judges (below) against real sweeps of the
                     configs; the one that finds the real best static T (or an adjacent one) on
                     the most clusters, then with the lowest mean |error| over every sweep point,
                     is written to FILE (its "fit" report kept, the grid under "calibration").
                     Choose on validation clusters; judge the result on others with fidelity
      --real DIR     an earlier real evaluation of (some of) the configs, reused; repeatable
                     (default: run the real evaluation once, in the first scale's folder)
      --scales LIST  drift scales to try, comma-separated, each above 0 and at most 1000
                     (default 1,1.1,1.2,1.3,1.4,1.5)
      --steps-gains LIST  the accuracy's gain per ln(1 + a round's local steps) to try with each
                     scale, comma-separated, each 0 to 1 (default 0: the fit's accuracy map;
                     e.g. 0,0.003,0.006)
      --steps-reference S  the round steps up to which the gain adds nothing (default 8)
      --seeds LIST, --jobs N, --policy P.pt, --epochs N, --target A, --overwrite   as for fidelity
      --work DIR     one fidelity folder per scale (default results/surrogate-calibration)
      --out FILE     (default surrogate-calibrated.json)

  fidelity SURROGATE.json CONFIG...
                     orchestra evaluate's static-T sweep (with orchestra-lcm, random moves and a
                     policy) on the configs with real training and on the surrogate, compared per
                     cluster: the best static T on each side (same or adjacent?) and the time to
                     target (relative error); and the surrogate's best T in real training, over
                     the real best static T, beside every other controller's (on the same seeds,
                     so it has seen their draws: `pick --real` judges one planned on others);
                     DIR/fidelity.md and DIR/fidelity.csv
      --seeds LIST   (default 1-3)
      --jobs N       seeds run at once, in processes (default 1)
      --policy P.pt  the policy judged beside the sweep; its move and interval set the sweep's
                     (default pretrained/orchestra-a3c.pt)
      --real DIR     an earlier real evaluation of the same configs and seeds, reused;
                     repeatable (e.g. one folder per set of configs); it must have run on the
                     workload judged here (its evaluate.yaml's epochs and target)
      --epochs N, --target A   every config's training.epochs / target_accuracy replaced, on
                     both sides (as for orchestra evaluate)
      --out DIR      (default results/surrogate-fidelity)
      --overwrite    DIR's surrogate/ or real/ holds another evaluation (other seeds, configs or
                     workload): replace it, as orchestra evaluate --overwrite does

  pick SURROGATE.json CONFIG...
                     a static barrier per config before any real run: fidelity's sweep on the
                     surrogate alone (seconds), and on each cluster the T with the fewest misses,
                     then the shortest time to target (among points that missed as often, the
                     highest accuracy); DIR/pick.md and DIR/pick.csv. Use it as
                     {name: fixed-t, T_ms: T}
      --seeds LIST   the planning seeds (default 101-110: none that evaluate runs by default; a
                     seed fixes the workers' batch-time noise and the data order, so a pick planned
                     on the seeds it is judged on has seen them)
      --real DIR     an orchestra evaluate folder of the same configs (repeatable): the pick
                     judged there like its controllers (over the oracle, paired), written as
                     DIR/judged.md and DIR/judged.csv; its seeds must not be planning seeds
      --jobs N, --policy P.pt, --epochs N, --target A, --overwrite   as for fidelity
      --out DIR      (default results/surrogate-pick)

  hardest POLICY.pt TRAIN_CONFIG
                     the clusters where the policy trails the best static T the most (Genet's
                     curriculum): N clusters drawn from the training config's distribution, on
                     each the policy (greedy, started at T*, as deployed) and a static sweep of T*
                     times powers of two over the controller's range, on the same episode seed
                     (the config's environment: the surrogate in seconds, real training in hours);
                     the K with the largest time over the best static T's (the policy's misses
                     first) go to FILE, which a training config reads as focus: {files: [FILE]}
      --candidates N (default 256)
      --keep K       (default 32)
      --seed S       candidate i's episode seed is derived from (S, i) (default 1)
      --out FILE     (default focus-clusters.json)

examples:
  nice -n 5 orchestra surrogate log configs/a3c_general.yaml --episodes 200 --out results/surrogate-log
  orchestra surrogate fit results/surrogate-log --out surrogate.json
  orchestra surrogate calibrate surrogate.json results/validation/*.yaml --real results/validation-real --out calibrated.json
  orchestra surrogate fidelity calibrated.json configs/heldout/*.yaml --seeds 1-3 --jobs 2
)";

int surrogate_log(ArgCursor& arg) {
  std::string config_path;
  RoundLogOptions options;
  options.out_dir = "results/surrogate-log";
  while (arg.next()) {
    const std::string& a = arg.arg();
    if (arg.is_help()) {
      std::cout << kSurrogateHelp;
      return 0;
    } else if (a == "--episodes") {
      options.episodes = arg.integer(1, 10000000);
    } else if (a == "--first") {
      options.first_episode = arg.integer(0, 1000000000);
    } else if (a == "--seed") {
      options.seed = static_cast<std::uint64_t>(arg.integer(0, std::numeric_limits<std::int64_t>::max()));
    } else if (a == "--chunk") {
      options.chunk = static_cast<int>(arg.integer(1, 100000));
    } else if (a == "--after-target") {
      options.after_target_epochs = arg.number(0, 1000);
    } else if (a == "--out") {
      options.out_dir = arg.value();
    } else if (a == "--quiet") {
      options.quiet = true;
    } else if (arg.is_option()) {
      throw UsageError("log: unknown option " + a);
    } else if (config_path.empty()) {
      config_path = a;
    } else {
      throw UsageError("log takes one TRAIN_CONFIG, got a second: " + a);
    }
  }
  if (config_path.empty()) throw UsageError("log needs TRAIN_CONFIG");
  const TrainConfig config = load_train_config(config_path);
  const RoundLogSummary s = log_real_rounds(config, options);
  if (!options.quiet) {
    std::fprintf(stderr, "surrogate log: %lld episodes run (%lld already there), %lld rounds in %.1f s; files in %s\n",
                 static_cast<long long>(s.episodes_run), static_cast<long long>(s.episodes_skipped), static_cast<long long>(s.rounds),
                 s.seconds, options.out_dir.c_str());
  }
  return 0;
}

int surrogate_fit(ArgCursor& arg) {
  std::vector<std::string> folders;
  std::string out = "surrogate.json", judge_file, paths_file;
  SurrogateFitOptions options;
  while (arg.next()) {
    const std::string& a = arg.arg();
    if (arg.is_help()) {
      std::cout << kSurrogateHelp;
      return 0;
    } else if (a == "--out") {
      out = arg.value();
    } else if (a == "--forms") {
      options.forms.clear();
      std::string list = arg.value(), name;
      std::istringstream in(list);
      while (std::getline(in, name, ','))
        options.forms.push_back(parse_option<env::SurrogateForm>(
            "--forms", name, {{"progress-noise", env::SurrogateForm::ProgressNoise}, {"sample-clock", env::SurrogateForm::SampleClock}}));
      if (options.forms.empty()) throw UsageError("--forms: name at least one form");
    } else if (a == "--holdout-every") {
      options.holdout_every = static_cast<int>(arg.integer(2, 1000));
    } else if (a == "--draws") {
      options.draws = static_cast<int>(arg.integer(1, 10000));
    } else if (a == "--iterations") {
      options.max_iterations = static_cast<int>(arg.integer(1, 100000));
    } else if (a == "--training-limit") {
      options.training_limit = arg.integer(5, 100000000);
    } else if (a == "--target-weight") {
      options.target_weight = arg.number(1, 1000);
    } else if (a == "--judge") {
      judge_file = arg.value();
    } else if (a == "--paths") {
      paths_file = arg.value();
    } else if (a == "--quiet") {
      options.quiet = true;
    } else if (arg.is_option()) {
      throw UsageError("fit: unknown option " + a);
    } else {
      folders.push_back(a);
    }
  }
  if (folders.empty()) throw UsageError("fit needs at least one LOG_DIR");
  // A slip of the path (a round log's file, a config) must not be written over, before any work.
  if (!paths_file.empty()) common::check_replaceable_output(paths_file, "--paths", "a replayed paths CSV", kReplayedPathsHeader);
  if (judge_file.empty()) common::check_replaceable_output(out, "--out", "a surrogate", env::kSurrogateSignature);
  const RoundLogs logs = read_round_logs(folders);
  if (!judge_file.empty()) {  // no fit: how well a surrogate file predicts the held-out episodes
    const auto model = env::read_surrogate(judge_file);
    std::vector<const LoggedEpisode*> holdout;
    for (const auto& e : logs.episodes)
      if (e.id % options.holdout_every == 0) holdout.push_back(&e);
    // Nothing held out would be judged perfect (every error 0 over no episode).
    if (holdout.empty())
      throw UsageError("--judge: --holdout-every " + std::to_string(options.holdout_every) + " holds out none of the " +
                       std::to_string(logs.episodes.size()) + " logged episodes (those whose id is a multiple of it): give a smaller one");
    nlohmann::json quality = quality_json(judge(*model, logs, holdout, options));
    // The fit refits on every episode: judged on its own logs, "held out" is not out of sample.
    const bool in_fit = fitted_on_logs(common::read_json_file(judge_file), folders);
    quality["out_of_sample"] = !in_fit;
    if (in_fit && !options.quiet)  // --quiet: the JSON's out_of_sample still says it
      std::fprintf(stderr, "surrogate fit --judge: %s was fitted on these logs, every episode included: the held-out figures are in sample\n",
                   judge_file.c_str());
    std::cout << quality.dump(2) << "\n";
    if (!paths_file.empty()) {
      std::vector<const LoggedEpisode*> all;
      for (const auto& e : logs.episodes) all.push_back(&e);
      common::write_file_atomic(paths_file, replayed_paths_csv(*model, logs, all));
    }
    return 0;
  }
  SurrogateFitResult result = fit_surrogate(logs, options);
  result.report["command"] = "orchestra surrogate fit " + [&] {
    std::string joined;
    for (const auto& f : folders) joined += (joined.empty() ? "" : " ") + f;
    return joined;
  }();
  env::write_surrogate(out, result.model, result.report);
  if (!options.quiet) std::fprintf(stderr, "surrogate fit: wrote %s (%s)\n", out.c_str(), env::surrogate_form_name(result.chosen));
  return 0;
}

// The arguments `fidelity` and `calibrate` share: the sweep's seeds, processes and policy, the real
// evaluations reused, quiet, the workload changed, then SURROGATE.json and the CONFIGs. False for
// any other option.
bool read_fidelity_argument(ArgCursor& arg, FidelityRunOptions& options) {
  const std::string& a = arg.arg();
  if (a == "--seeds") {
    options.seeds = parse_seed_list("--seeds", arg.value());
  } else if (a == "--jobs") {
    options.jobs = static_cast<int>(arg.integer(1, 64));
  } else if (a == "--policy") {
    options.policy = arg.value();
  } else if (a == "--real") {
    options.real_from.push_back(arg.repeatable_value());
  } else if (a == "--quiet") {
    options.quiet = true;
  } else if (a == "--overwrite") {
    options.overwrite = true;
  } else if (read_workload_flag(arg, options.workload)) {
    // --epochs, --target
  } else if (arg.is_option()) {
    return false;
  } else if (options.surrogate.empty()) {
    options.surrogate = a;
  } else {
    options.configs.push_back(a);
  }
  return true;
}

// fidelity's and pick's command lines: the same flags and CONFIGs, each its --out. False after --help.
bool read_sweep_command(ArgCursor& arg, FidelityRunOptions& options, const std::string& verb) {
  while (arg.next()) {
    const std::string& a = arg.arg();
    if (arg.is_help()) {
      std::cout << kSurrogateHelp;
      return false;
    } else if (a == "--out") {
      options.out_dir = arg.value();
    } else if (!read_fidelity_argument(arg, options)) {
      throw UsageError(verb + ": unknown option " + a);
    }
  }
  if (options.surrogate.empty() || options.configs.empty())
    throw UsageError(verb + " needs SURROGATE.json and at least one CONFIG");
  return true;
}

int surrogate_fidelity(ArgCursor& arg) {
  FidelityRunOptions options;
  if (!read_sweep_command(arg, options, "fidelity")) return 0;
  const FidelityRunResult result = run_surrogate_fidelity(options);
  std::cout << surrogate_fidelity_markdown(result.fidelity);
  if (!result.seeds_not_compared.empty()) {
    std::string missing, compared;
    for (const auto s : result.seeds_not_compared) missing += (missing.empty() ? "" : ", ") + std::to_string(s);
    for (const auto s : result.fidelity.seeds) compared += (compared.empty() ? "" : ", ") + std::to_string(s);
    std::fprintf(stderr, "surrogate fidelity: warning: the real runs have no seed %s: compared on seeds %s only\n", missing.c_str(),
                 compared.c_str());
  }
  if (!options.quiet) std::fprintf(stderr, "surrogate fidelity: %s, %s\n", result.files[0].c_str(), result.files[1].c_str());
  return 0;
}

int surrogate_pick(ArgCursor& arg) {
  FidelityRunOptions options;
  options.out_dir = "results/surrogate-pick";
  options.seeds = default_planning_seeds();
  if (!read_sweep_command(arg, options, "pick")) return 0;
  const PickRunResult result = run_surrogate_pick(options);
  std::cout << static_picks_markdown(result.picks);
  if (result.judged) std::cout << "\n" << evaluation_markdown(*result.judged);
  if (!options.quiet) {
    std::string files;
    for (const auto& f : result.files) files += (files.empty() ? "" : ", ") + f;
    std::fprintf(stderr, "surrogate pick: %s\n", files.c_str());
  }
  return 0;
}

int surrogate_calibrate(ArgCursor& arg) {
  SurrogateCalibrationOptions options;
  while (arg.next()) {
    const std::string& a = arg.arg();
    if (arg.is_help()) {
      std::cout << kSurrogateHelp;
      return 0;
    } else if (a == "--scales") {
      // A drift scale multiplies the fit's d_0: a thousand times it is already no drift at all
      // (1e300 was written as a d_0 of 3e302, and 1e308 as an infinity the file cannot hold).
      options.scales = parse_positive_list("--scales", arg.value(), 1e3);
    } else if (a == "--steps-gains") {
      // An accuracy's gain per ln(1 + steps): above 1 it is more than the whole scale of accuracy.
      options.steps_gains = parse_non_negative_list("--steps-gains", arg.value(), 1);
    } else if (a == "--steps-reference") {
      options.steps_reference = arg.number(0, 1e6);
    } else if (a == "--work") {
      options.work_dir = arg.value();
    } else if (a == "--out") {
      options.out = arg.value();
    } else if (!read_fidelity_argument(arg, options.fidelity)) {
      throw UsageError("calibrate: unknown option " + a);
    }
  }
  if (options.fidelity.surrogate.empty() || options.fidelity.configs.empty())
    throw UsageError("calibrate needs SURROGATE.json and at least one CONFIG");
  common::check_replaceable_output(options.out, "--out", "a surrogate", env::kSurrogateSignature);
  // The fitted surrogate it starts from is a surrogate too: written over, it was gone.
  std::error_code ec;
  if (std::filesystem::equivalent(options.fidelity.surrogate, options.out, ec))
    throw UsageError("--out " + options.out + ": is the surrogate being calibrated (" + options.fidelity.surrogate +
                     "): write the calibrated one to another file");
  const SurrogateCalibrationResult result = calibrate_surrogate(options);
  std::cout << calibration_markdown(result);
  if (!options.fidelity.quiet)
    std::fprintf(stderr, "surrogate calibrate: wrote %s (drift scale %g, steps gain %g)\n", options.out.c_str(),
                 result.points[result.chosen].scale, result.points[result.chosen].steps_gain);
  return 0;
}

int surrogate_hardest(ArgCursor& arg) {
  std::vector<std::string> positional;
  HardestSearchOptions options;
  std::string out = "focus-clusters.json";
  bool quiet = false;
  while (arg.next()) {
    const std::string& a = arg.arg();
    if (arg.is_help()) {
      std::cout << kSurrogateHelp;
      return 0;
    } else if (a == "--candidates") {
      options.candidates = static_cast<int>(arg.integer(1, 1000000));
    } else if (a == "--keep") {
      options.keep = static_cast<int>(arg.integer(1, 1000000));
    } else if (a == "--seed") {
      options.seed = static_cast<std::uint64_t>(arg.integer(0, std::numeric_limits<std::int64_t>::max()));
    } else if (a == "--out") {
      out = arg.value();
    } else if (a == "--quiet") {
      quiet = true;
    } else if (arg.is_option()) {
      throw UsageError("hardest: unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2) throw UsageError("hardest needs POLICY.pt and TRAIN_CONFIG");
  common::check_replaceable_output(out, "--out", "a focus-clusters file", kFocusClustersSignature);
  agents::A3cPolicy policy = agents::A3cPolicy::load(positional[0]);
  const TrainConfig config = load_train_config(positional[1]);
  if (!config.distribution) throw UsageError("hardest: " + positional[1] + " draws no clusters; it needs a clusters: distribution");
  if (!(policy.control().as_trained() == config.control))
    throw UsageError("hardest: " + positional[0] + " was trained with another controller (moves, bounds or state) than " + positional[1] +
                     "'s: search with the config it was trained with");
  const HardestSearchResult result = find_hardest_clusters(config, std::move(policy), options);
  // A focus file without a cluster is refused by the training that reads it: say so here instead.
  if (result.clusters.empty())
    throw common::DataError("hardest: none of the " + std::to_string(result.candidates) + " candidates could be compared (" +
                            std::to_string(result.incomparable) + " where no static T reached the target): nothing written to " + out +
                            "; draw more with --candidates");
  write_focus_clusters(out, result, options.keep, positional[0], positional[1], options.seed);
  std::printf("%d candidates: the policy %.3fx the best static T (geometric mean over %zu), %d missed, %d where no static T reached the target\n",
              result.candidates, result.geomean_gap, result.clusters.size(), result.policy_misses, result.incomparable);
  std::printf("| draw seed | workers | policy s | best static s | best T / T* | gap |\n|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < result.clusters.size() && static_cast<int>(i) < options.keep; ++i) {
    const ClusterGap& c = result.clusters[i];
    std::printf("| %llu | %d | %.2f%s | %.2f | %g | %.3fx |\n", static_cast<unsigned long long>(c.draw_seed), c.workers, c.policy_s,
                c.policy_reached ? "" : " (missed)", c.best_static_s, c.best_static_x_start, c.gap);
  }
  if (!quiet) std::fprintf(stderr, "surrogate hardest: %s\n", out.c_str());
  return 0;
}

}  // namespace

int command_surrogate(const Args& args) {
  ArgCursor arg(args);
  if (!arg.next() || arg.is_help()) {
    std::cout << kSurrogateHelp;
    return args.empty() ? 2 : 0;
  }
  const std::string verb = arg.arg();
  if (verb == "log") return surrogate_log(arg);
  if (verb == "fit") return surrogate_fit(arg);
  if (verb == "calibrate") return surrogate_calibrate(arg);
  if (verb == "fidelity") return surrogate_fidelity(arg);
  if (verb == "pick") return surrogate_pick(arg);
  if (verb == "hardest") return surrogate_hardest(arg);
  throw UsageError("unknown surrogate command '" + verb + "' (log, fit, calibrate, fidelity, pick or hardest)");
}

}  // namespace experiments
