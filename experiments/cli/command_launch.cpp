// `orchestra launch` (start the worker processes of a real run) and the hidden `orchestra worker`
// (one of those processes).
#include <torch/cuda.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>

#include "common/limits.hpp"
#include "env/real/c10d_backend_registry.hpp"
#include "env/real/c10d_communicator.hpp"
#include "common/errors.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/cli/result_story.hpp"
#include "env/real/launcher.hpp"
#include "env/train/device.hpp"
#include "env/train/local_sgd_env.hpp"
#include "env/train/models.hpp"
#include "experiments/runner/progress_reporter.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/runner/real_checkpoint.hpp"
#include "experiments/runner/real_run.hpp"

namespace experiments {
namespace {

const char* kLaunchHelp = R"(usage: orchestra launch --nproc N CONFIG [--out DIR] [--resume | --overwrite] [--timeout S]
                        [--nnodes M --node-rank R --master-addr HOST --master-port P]
                        [--backend B] [--seed N] [--threads N] [--quiet]

Runs a `cluster.mode: real` experiment on real processes: N workers on this machine, M machines
in all (one worker per entry of cluster.workers, in order: rank = node_rank * N + local rank).
Rank 0 runs each policy and writes the same results as `orchestra run` after every epoch.
Collectives go through c10d: Gloo (ranks on the CPU, or on GPUs: runtime.device: cuda), or NCCL
(runtime.device: cuda, one GPU per rank; needs a CUDA libtorch). With runtime.device: cuda each
rank trains on GPU LOCAL_RANK mod the visible GPUs.

  --nproc N           workers on this machine (default 1)
  --nnodes M          machines (default 1); run the same command on each with its --node-rank
  --node-rank R       this machine's index (default 0); node 0 hosts the rendezvous store
  --master-addr HOST  node 0's address (default 127.0.0.1)
  --master-port P     node 0's store port (default: a free port; required with --nnodes > 1)
  --timeout S         seconds any collective may wait before the run stops (default 120)
  --out DIR           where to write results (default results/<name>)
  --resume            continue from DIR/checkpoints after a failed run (with the config it ran with:
                      a checkpoint of another config is refused, naming the keys that differ)
  --overwrite         DIR holds another experiment's results: remove them (only those folders)
  --backend B         a c10d backend below (default gloo)
  --seed N, --threads N, --quiet   as for orchestra run (threads per worker)

Progress on stderr: rank 0 reports each policy's epochs as orchestra run does (redrawn on a
terminal, a line every 5 s otherwise; ORCHESTRA_PROGRESS_EVERY_S changes the 5); on the other
machines the launcher says how many of its ranks still run.

Heterogeneity on one machine: cluster.perturbations slow a worker's measured compute down
(slowdown: 3 makes each step take 3x its measured time; add_ms with period_s is LBB's cyclic
disturbance). Exit status: 0 when every worker finished; 1, with one line naming the worker that
failed first, otherwise (results up to the last finished epoch are kept).

example:
  orchestra launch --nproc 2 configs/real_straggler.yaml --out results/real
)";


// The options `launch` passes through to each worker, and the worker's own parsing of them.
struct RunFlags {
  std::string config;
  RunOptions run;
  std::vector<std::string> passthrough;
};

bool parse_run_flag(ArgCursor& arg, RunFlags& flags) {
  const std::string a = arg.arg();
  const auto value = [&]() -> const std::string& { return arg.value(); };
  if (!a.empty() && a[0] != '-') {
    if (!flags.config.empty()) throw UsageError("one config at a time (got " + flags.config + " and " + a + ")");
    flags.config = a;
    return true;
  }
  if (a == "--out") {
    flags.run.out_dir = value();
  } else if (a == "--seed") {
    flags.run.overrides.seed = static_cast<std::uint64_t>(arg.integer(0, common::kMaxSeed));
  } else if (a == "--threads") {
    flags.run.overrides.threads = static_cast<int>(arg.integer(1, 256));
  } else if (a == "--resume") {
    flags.run.resume = true;
  } else if (a == "--quiet") {
    flags.run.quiet = true;
  } else {
    return false;
  }
  flags.passthrough.push_back(a);
  if (a != "--resume" && a != "--quiet") flags.passthrough.push_back(arg.arg());
  return true;
}

// A backend whose collectives run on each rank's GPU (NCCL) reduces CUDA tensors, one GPU per rank:
// the ranks must train on GPUs, and this machine's ranks on different ones (NCCL refuses two ranks
// on one GPU; Gloo does not).
void check_one_gpu_per_rank(const std::string& backend, const std::string& device, int nproc) {
  const std::string flag = "--backend " + backend;
  if (device == "cpu") throw UsageError(flag + " reduces CUDA tensors: set runtime.device: cuda (each rank then trains on its own GPU)");
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (device != "cuda" && nproc > 1)
    throw UsageError(flag + " needs one GPU per rank, but runtime.device: " + device + " puts all " + std::to_string(nproc) +
                     " ranks of this machine on one GPU (use device: cuda, or --backend gloo)");
  if (nproc > gpus)
    throw UsageError(flag + " needs one GPU per rank: " + std::to_string(nproc) + " ranks on this machine, " + std::to_string(gpus) +
                     " GPU" + (gpus == 1 ? "" : "s") + " visible (ranks can share a GPU with --backend gloo)");
}

// The backend a --backend value names, or a UsageError listing the table's.
const env::C10dBackend& backend_named(const std::string& name) {
  if (const env::C10dBackend* b = env::find_c10d_backend(name)) return *b;
  std::string list;
  const auto names = env::c10d_backend_names();
  for (std::size_t i = 0; i < names.size(); ++i) list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  throw UsageError("--backend: expected " + list + ", got '" + name + "'");
}

}  // namespace

int command_launch(const Args& args) {
  env::LaunchOptions launch;
  RunFlags flags;
  bool port_given = false, overwrite = false;
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    const auto value = [&]() -> const std::string& { return arg.value(); };
    if (a == "-h" || a == "--help") {
      std::cout << kLaunchHelp << "\nc10d backends (--backend):\n" << env::c10d_backend_help();
      return 0;
    } else if (a == "--nproc") {
      launch.nproc = static_cast<int>(arg.integer(1, 4096));
    } else if (a == "--nnodes") {
      launch.nnodes = static_cast<int>(arg.integer(1, 4096));
    } else if (a == "--node-rank") {
      launch.node_rank = static_cast<int>(arg.integer(0, 4095));
    } else if (a == "--master-addr") {
      launch.master_addr = value();
    } else if (a == "--master-port") {
      launch.master_port = static_cast<int>(arg.integer(1, 65535));
      port_given = true;
    } else if (a == "--timeout") {
      launch.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(static_cast<int>(arg.integer(1, 86400))) * 1000);
    } else if (a == "--backend") {
      launch.backend = backend_named(value()).name;
    } else if (a == "--overwrite") {
      overwrite = true;
    } else if (!parse_run_flag(arg, flags)) {
      throw UsageError("unknown option " + a);
    }
  }
  if (flags.config.empty()) throw UsageError("needs a CONFIG file");
  if (launch.node_rank >= launch.nnodes) throw UsageError("--node-rank must be below --nnodes");
  if (launch.nnodes > 1 && !port_given) throw UsageError("--nnodes > 1 needs --master-port (and --master-addr) agreed by every machine");
  const env::C10dBackend& backend = backend_named(launch.backend);
  if (const std::string why = backend.unavailable(); !why.empty())
    throw UsageError("--backend " + launch.backend + ": " + why + (backend.one_gpu_per_rank ? "; use --backend gloo" : ""));
  if (overwrite && flags.run.resume) throw UsageError("--resume continues the results in DIR, --overwrite removes other results: give one");
  // Bad configs are reported here, once, before any worker starts: a config that is not this
  // group's first (a simulated one is answered with where it runs), then the experiment as every
  // worker will resolve it (overrides, sweeps, every policy built).
  ExperimentConfig read = load_config(flags.config);
  check_real_config(read, launch.nnodes * launch.nproc);
  const Experiment experiment = resolve_experiment(std::move(read), flags.run.overrides);
  const ExperimentConfig& config = experiment.config;
  if (backend.one_gpu_per_rank) check_one_gpu_per_rank(launch.backend, config.training.device, launch.nproc);
  // Rank 0, on node 0, writes the results: its machine claims the folder for the whole run, and a
  // resume is checked against the checkpoints' configs, before any worker starts.
  std::optional<ResultsFolder> folder;
  if (launch.node_rank == 0) {
    const std::string out_dir = results_dir(config, flags.run);
    if (!flags.run.resume)
      for (const auto& p : experiment.policies) check_checkpoints_replaceable(out_dir, p.entry.label);
    if (flags.run.resume)
      for (const auto& p : experiment.policies) {
        nlohmann::json resolved = config.resolved;
        resolved["policy"] = p.params;
        check_resume(out_dir, p.entry.label, resolved);
        check_resume_loads(out_dir, p.entry.label, *env::make_model(config.training.model, env::input_shape_of(config.data), 10));
      }
    folder.emplace(out_dir, run_folder_plan(experiment), overwrite);
  }
  launch.quiet = flags.run.quiet;
  launch.worker_args = {flags.config};
  launch.worker_args.insert(launch.worker_args.end(), flags.passthrough.begin(), flags.passthrough.end());
  // Rank 0's process reports the run's progress (per policy and epoch, as `orchestra run` does); a
  // machine without rank 0 would be silent until the end, so its launcher says how its ranks do.
  ProgressReporter progress(ProgressReporter::style_for(stderr, flags.run.quiet), stderr,
                            flags.run.quiet ? ProgressTiming{} : ProgressTiming::from_environment());
  if (launch.node_rank != 0) {
    const int first = launch.node_rank * launch.nproc;
    const std::string ranks = std::to_string(first) + (launch.nproc > 1 ? "-" + std::to_string(first + launch.nproc - 1) : "");
    progress.start("node " + std::to_string(launch.node_rank), "ranks ended", launch.nproc, 0, false);
    // `ranks` by value: this block ends before launch_workers calls the callback.
    launch.on_wait = [&progress, ranks, nproc = launch.nproc, master = launch.master_addr](int running) {
      progress.update(nproc - running, {{"running", std::to_string(running)}, {"ranks", ranks}, {"rank 0 on", master}});
    };
  }
  const env::LaunchOutcome outcome = env::launch_workers(launch);
  if (launch.node_rank != 0) progress.finish();
  if (outcome.exit_code != 0) {
    // Rank 0's machine holds the results and checkpoints; another machine's launcher points there.
    if (launch.node_rank == 0)
      std::cerr << "orchestra launch: the run failed: " << outcome.message << ". Results up to the last finished epoch are in "
                << results_dir(config, flags.run) << "; continue with --resume.\n";
    else
      std::cerr << "orchestra launch: the run failed: " << outcome.message << ". Rank 0's machine (" << launch.master_addr
                << ") holds the results up to the last finished epoch; continue with --resume on every machine.\n";
  }
  return outcome.exit_code;
}

int command_worker(const Args& args) {
  RunFlags flags;
  for (ArgCursor arg(args); arg.next();)
    if (!parse_run_flag(arg, flags)) throw UsageError("unknown option " + arg.arg() + " (worker is started by orchestra launch)");
  if (flags.config.empty()) throw UsageError("worker needs a CONFIG file (it is started by orchestra launch)");
  env::RendezvousSpec spec = env::rendezvous_from_environment();
  Experiment experiment = load_experiment(flags.config, flags.run.overrides);
  check_device(experiment.config);
  spec.device = env::rank_device(experiment.config.training.device, spec.local_rank);  // the communicator's too, under NCCL
  env::C10dCommunicator comm(spec);
  try {
    RealRunCluster cluster(comm, results_dir(experiment.config, flags.run), flags.run.resume, spec.device);
    const ExperimentResult result = run_experiment(experiment, cluster, flags.run);
    if (comm.rank() == 0)
      std::cout << comparison_table(result.outcomes, result.target_accuracy) << "results: " << result.out_dir << "/\n"
                << story_after_table(results_of_run(result.out_dir, result.outcomes), result.out_dir, nullptr);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "orchestra worker rank " << spec.rank << ": " << e.what() << std::endl;
    // A refused input (machines given other configs) exits 2 as any command's; the rest 1.
    const auto* error = dynamic_cast<const common::Error*>(&e);
    const int code = error && error->exit_code() == static_cast<int>(common::ExitCode::BadInput) ? 2 : 1;
    // A group with a dead or hung peer keeps a transport thread blocked in the failed collective;
    // neither its destructor nor exit()'s teardown under that thread may decide how this process
    // ends. The results are on disk already (written and renamed after every epoch).
    comm.abandon();
    std::fflush(stdout);
    std::_Exit(code);
  }
}

}  // namespace experiments
