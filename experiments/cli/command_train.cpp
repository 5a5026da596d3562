// The A3C commands (issue 5): `train` (server + K agent processes on this machine), `serve` and
// `agent` (the same two halves started by hand on several machines), `keygen` (CURVE keys).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <iostream>
#include <optional>

#include "agents/agent_worker.hpp"
#include "agents/curve_keys.hpp"
#include "agents/endpoints.hpp"
#include "agents/learner.hpp"
#include "agents/parameter_server.hpp"
#include "agents/agent_processes.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "env/train/compute_threads.hpp"
#include "experiments/config/config.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/progress_reporter.hpp"
#include "experiments/runner/train_config.hpp"
#include "common/errors.hpp"
#include "common/interrupt.hpp"

namespace experiments {
namespace {

const char* kTrainHelp = R"(usage: orchestra train CONFIG [--out DIR] [--resume | --overwrite] [--agents K] [--updates N] [--quiet]

Trains an A3C barrier policy (Orchestra Sec. 3.1.3): a parameter server on loopback and K agent
processes, each with its own environment (or a3c.envs_per_agent of them, stepped as one) and seed,
pushing gradients asynchronously over ZeroMQ.
Writes to DIR (default results/<name>/): policy.pt (load it with `policy: DIR/policy.pt` in an
orchestra-a3c policy, or torch.load in Python), checkpoint.pt (every a3c.checkpoint_every updates
and at the end), train.csv (update, episodes, mean reward, mean time to target, ...).
Progress on stderr: updates done, episodes, mean return and time to target over the last
a3c.stats_window episodes, updates per second and ETA (redrawn on a terminal, a line every 5 s
otherwise; ORCHESTRA_PROGRESS_EVERY_S changes the 5).
Ctrl-C or SIGTERM stops it with the checkpoint of that update written (exit 130 or 143); --resume
continues from there. A second Ctrl-C kills it at once.

  --out DIR      where to write
  --resume       continue from DIR/checkpoint.pt with the config it was trained with: a changed
                 key that decides what is learned is refused, naming it; a longer run
                 (total_updates, --updates), other agents, timeouts and cadences are not
  --overwrite    DIR holds another training (train.csv, checkpoint.pt, policy.pt, snapshots/) or
                 other results (policy folders, seeds, an evaluation's clusters): start afresh,
                 removing exactly what the refusal without it lists (--resume continues a training)
  --agents K     override a3c.agents
  --updates N    override a3c.total_updates
  --quiet        no progress output

example:
  orchestra train configs/a3c_train.yaml --out results/a3c
)";

// The train help with the learners of the table (agents/learner.hpp) appended.
std::string train_help() {
  return std::string(kTrainHelp) +
         "\nlearners (a3c.algorithm; each on one environment per agent, or on a3c.envs_per_agent stepped as one):\n" +
         agents::learner_help();
}

const char* kServeHelp = R"(usage: orchestra serve CONFIG [--bind ENDPOINT] [--keys FILE] [--out DIR] [--resume | --overwrite] [--updates N] [--quiet]

Runs only the A3C parameter server of `orchestra train`, for agents started by hand
(`orchestra agent CONFIG --connect ENDPOINT`). Binds tcp://127.0.0.1:5555 by default; any
non-loopback ENDPOINT needs --keys FILE from `orchestra keygen` (agents need the same file).
Ctrl-C or SIGTERM stops it as it stops `orchestra train`: the checkpoint written, then --resume.

example (two machines):
  orchestra keygen keys.txt
  orchestra serve configs/a3c_train.yaml --bind tcp://0.0.0.0:5555 --keys keys.txt --out results/a3c
  orchestra agent configs/a3c_train.yaml --connect tcp://server:5555 --keys keys.txt --index 0   # on each agent machine
)";

const char* kAgentHelp = R"(usage: orchestra agent CONFIG --connect ENDPOINT [--index K] [--keys FILE] [--verbose]

Runs one A3C agent against a parameter server: its environment is CONFIG's experiments[K mod n]
(with a3c.envs_per_agent E, its E environments are experiments[(K E + j) mod n], j < E).
It exits 0 when training is over. A server stopped early (Ctrl-C, SIGTERM), restarted, or silent
for a3c.reply_timeout_s (killed) is joined again at ENDPOINT, so `orchestra serve --resume` started
within another reply_timeout_s goes on with the same agents; then it exits 1 ("no answer from the server").

example:
  orchestra agent configs/a3c_train.yaml --connect tcp://127.0.0.1:5555 --index 1
)";

const char* kKeygenHelp = R"(usage: orchestra keygen FILE

Writes CURVE key pairs for the A3C server and its agents to FILE (mode 0600). Give the file to
`orchestra serve --keys FILE` and to every `orchestra agent --keys FILE`; peers without it are refused.

example:
  orchestra keygen keys.txt
)";

struct CommonFlags {
  std::string config;
  std::string out;
  bool resume = false;
  bool overwrite = false;
  std::optional<int> agents;
  std::optional<std::int64_t> updates;
  bool quiet = false;
  std::string bind;
  std::string connect;
  std::string keys;
  int index = 0;
  bool verbose = false;
  bool help = false;
};


CommonFlags parse(const Args& args, const std::vector<std::string>& allowed) {
  CommonFlags f;
  const auto ok = [&](const std::string& flag) {
    for (const auto& a : allowed)
      if (a == flag) return true;
    return false;
  };
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    const auto value = [&]() -> const std::string& { return arg.value(); };
    if (a == "-h" || a == "--help") {
      f.help = true;
    } else if (!a.empty() && a[0] == '-' && !ok(a)) {
      throw UsageError("unknown option " + a);
    } else if (a == "--out") {
      f.out = value();
    } else if (a == "--resume") {
      f.resume = true;
    } else if (a == "--overwrite") {
      f.overwrite = true;
    } else if (a == "--agents") {
      f.agents = static_cast<int>(arg.integer(1, 1024));
    } else if (a == "--updates") {
      f.updates = arg.integer(1, std::int64_t{1} << 40);
    } else if (a == "--quiet") {
      f.quiet = true;
    } else if (a == "--verbose") {
      f.verbose = true;
    } else if (a == "--bind" || a == "--connect") {
      std::string& endpoint = a == "--bind" ? f.bind : f.connect;
      endpoint = value();
      const auto use = a == "--bind" ? agents::EndpointUse::Bind : agents::EndpointUse::Connect;
      if (const auto problem = agents::endpoint_problem(endpoint, use)) throw UsageError(a + " " + *problem);
    } else if (a == "--keys") {
      f.keys = value();
    } else if (a == "--index") {
      f.index = static_cast<int>(arg.integer(0, 1 << 20));
    } else if (f.config.empty()) {
      f.config = a;
    } else {
      throw UsageError("one config at a time (got " + f.config + " and " + a + ")");
    }
  }
  if (f.help) return f;
  if (f.config.empty()) throw UsageError("needs a CONFIG file");
  if (f.resume && f.overwrite) throw UsageError("--resume continues the training in DIR, --overwrite starts afresh: give one");
  return f;
}

agents::ParameterServerOptions server_options(const TrainConfig& config, const CommonFlags& f) {
  agents::ParameterServerOptions s;
  s.a3c = config.a3c;
  if (f.agents) s.a3c.agents = *f.agents;
  if (f.updates) s.a3c.total_updates = *f.updates;
  s.observation_size = config.observation_size;
  s.control = config.control;
  s.training = config.training_info;
  s.identity = config.identity;
  s.out_dir = f.out.empty() ? (std::filesystem::path("results") / config.name).string() : f.out;
  s.resume = f.resume;
  s.log = nullptr;  // the command gives it its progress reporter's log stream
  if (!f.keys.empty()) s.curve = agents::read_curve_keys(f.keys);
  return s;
}

// The server's folder, claimed for the whole training (results_folder.hpp): a fresh training
// does not replace another one's files unless --overwrite.
ResultsFolder claim_training_folder(const agents::ParameterServerOptions& options, const CommonFlags& f) {
  FolderPlan plan;
  plan.training = f.resume ? FolderPlan::Training::Resume : FolderPlan::Training::Fresh;
  return ResultsFolder(options.out_dir, plan, f.overwrite);
}

// One progress line of training: train.csv's numbers as they stand.
std::vector<ProgressField> training_fields(const agents::TrainingStats& s) {
  char ret[64], ttt[96];
  if (s.window > 0) std::snprintf(ret, sizeof ret, "%.3f", s.mean_return);
  else std::snprintf(ret, sizeof ret, "-");
  if (s.reached > 0) std::snprintf(ttt, sizeof ttt, "%.3g s (%d/%d reached)", s.mean_time_to_target_ms / 1000.0, s.reached, s.window);
  else std::snprintf(ttt, sizeof ttt, "- (0/%d reached)", s.window);
  std::vector<ProgressField> fields = {{"episodes", std::to_string(s.episodes)}, {"mean return", ret}, {"time to target", ttt}};
  if (s.dropped > 0) fields.push_back({"dropped", std::to_string(s.dropped)});
  return fields;
}

// Serves until done, with a progress line ticked between polls. `also` (may be empty) runs there
// too and can stop the serving by returning false.
agents::ServeResult serve_with_progress(agents::ParameterServer& server, ProgressReporter& progress, const std::string& label,
                                        const std::function<bool()>& also, const std::function<bool()>& drain_while = {}) {
  const agents::TrainingStats first = server.stats();
  progress.start(label, "updates", static_cast<double>(first.total_updates), static_cast<double>(first.updates));
  const agents::ServeResult result = server.serve([&] {
    const agents::TrainingStats s = server.stats();
    progress.update(static_cast<double>(s.updates), training_fields(s));
    return also ? also() : true;
  }, drain_while);
  progress.update(static_cast<double>(server.stats().updates), training_fields(server.stats()));
  progress.finish();
  return result;
}

int finish(const std::string& command, const agents::ServeResult& r, const std::string& out_dir, const common::InterruptRequest& interrupt) {
  if (r.outcome == agents::ServeOutcome::Finished) {
    std::cout << "trained " << r.updates << " updates (" << r.episodes << " episodes); policy: " << out_dir << "/policy.pt\n";
    return 0;
  }
  if (interrupt.requested()) {  // the checkpoint of this very update was written as serve() ended
    std::cerr << "orchestra " << command << ": interrupted by " << common::signal_name(interrupt.signal()) << " at update "
              << r.updates << "; checkpoint written, continue with --resume\n";
    return 128 + interrupt.signal();  // as a shell reports a process ended by that signal
  }
  std::cerr << "orchestra " << command << ": stopped at update " << r.updates << " ("
            << (r.outcome == agents::ServeOutcome::IdleTimeout ? "no agent left talking" : "every agent process ended")
            << "); resume with --resume\n";
  return 1;
}

// The experiments' runtime.device, checked here: on a machine without the GPU they name, the
// error is one config line (file:line: runtime.device: ...) before any agent starts.
void check_devices(const TrainConfig& config) {
  if (config.environment != TrainEnvironment::LocalSgd) return;
  for (const auto& experiment : config.experiments) check_device(load_config(experiment));
}

}  // namespace

int command_train(const Args& args) {
  const CommonFlags f = parse(args, {"--out", "--resume", "--overwrite", "--agents", "--updates", "--quiet"});
  if (f.help) {
    std::cout << train_help();
    return 0;
  }
  const TrainConfig config = load_train_config(f.config);
  check_devices(config);
  ProgressReporter progress(ProgressReporter::style_for(stderr, f.quiet), stderr,
                            f.quiet ? ProgressTiming{} : ProgressTiming::from_environment());
  env::set_compute_threads(1);  // the agents are the parallelism; one thread each keeps 2 cores sane
  agents::ParameterServerOptions options = server_options(config, f);
  const ResultsFolder folder = claim_training_folder(options, f);
  if (!f.quiet) options.log = &progress.log_stream();  // "agent 1 joined" and the progress line share stderr
  zmq::context_t context;
  agents::ParameterServer server(context, options);
  std::vector<std::string> common = {f.config, "--connect", server.endpoint()};
  agents::AgentProcesses children(options.a3c.agents, common, options.log);
  // Between polls: reap agents that ended; when none is left there is nobody to wait for.
  const common::InterruptRequest interrupt;
  const agents::ServeResult result =
      serve_with_progress(server, progress, "train", [&] { return !interrupt.requested() && children.poll() > 0; },
                          [&] { return !interrupt.requested() && children.poll() > 0; });
  children.stop_all(std::chrono::milliseconds(static_cast<long>(std::min(options.a3c.reply_timeout_s, 10.0) * 1000)));
  return finish("train", result, options.out_dir, interrupt);
}

int command_serve(const Args& args) {
  const CommonFlags f = parse(args, {"--out", "--resume", "--overwrite", "--updates", "--quiet", "--bind", "--keys"});
  if (f.help) {
    std::cout << kServeHelp;
    return 0;
  }
  const TrainConfig config = load_train_config(f.config);
  ProgressReporter progress(ProgressReporter::style_for(stderr, f.quiet), stderr,
                            f.quiet ? ProgressTiming{} : ProgressTiming::from_environment());
  env::set_compute_threads(1);
  agents::ParameterServerOptions options = server_options(config, f);
  const ResultsFolder folder = claim_training_folder(options, f);
  if (!f.quiet) options.log = &progress.log_stream();
  options.bind = f.bind.empty() ? "tcp://127.0.0.1:5555" : f.bind;
  zmq::context_t context;
  agents::ParameterServer server(context, options);
  const common::InterruptRequest interrupt;
  const agents::ServeResult result = serve_with_progress(server, progress, "serve", [&] { return !interrupt.requested(); });
  return finish("serve", result, options.out_dir, interrupt);
}

int command_agent(const Args& args) {
  const CommonFlags f = parse(args, {"--connect", "--index", "--keys", "--verbose"});
  if (f.help) {
    std::cout << kAgentHelp;
    return 0;
  }
  if (f.connect.empty()) throw UsageError("agent needs --connect ENDPOINT");
  const TrainConfig config = load_train_config(f.config);
  check_devices(config);
  env::set_compute_threads(1);
  agents::AgentWorkerOptions options;
  options.a3c = config.a3c;
  options.connect = f.connect;
  if (!f.keys.empty()) options.curve = agents::read_curve_keys(f.keys);
  options.log = f.verbose ? &std::cout : nullptr;
  zmq::context_t context;
  const agents::AgentResult r = config.merge_episodes
                                    ? agents::AgentWorker(context, options, make_merged_agent_envs(config)).run()
                                    : agents::AgentWorker(context, options, make_agent_envs(config, f.index)).run();
  if (r.exit == agents::AgentExit::Stopped) return 0;
  std::cerr << "orchestra agent " << f.index << ": " << agents::to_string(r.exit) << " (" << f.connect << ")"
            << (r.exit == agents::AgentExit::ServerTimeout
                    ? "; is the server running, and does --keys match its key file?\n"
                    : "\n");
  return 1;
}

int command_keygen(const Args& args) {
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << kKeygenHelp;
    return 0;
  }
  if (args.size() != 1 || args[0].empty() || args[0][0] == '-') throw UsageError("expected one FILE");
  if (!agents::curve_available()) throw common::SystemError("this libzmq was built without CURVE (libsodium)");
  // New keys over old ones would lock out the server and agents that use them, without a word.
  if (std::error_code ec; std::filesystem::exists(args[0], ec))
    throw UsageError(args[0] + " exists: a server and its agents may be using these keys; remove it first to make new ones");
  agents::write_curve_keys(args[0], agents::generate_curve_keys());
  std::cout << "CURVE keys written to " << args[0] << " (keep it private)\n";
  return 0;
}

}  // namespace experiments
