// The `orchestra` command line: one binary, one subcommand per task.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include <c10/util/Exception.h>

#include "common/errors.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/surrogate/barrier_planner.hpp"

namespace {

using experiments::Args;

// Every command, by task: the dispatch table and `orchestra help` come from this one list.
struct Command {
  const char* task;     // the heading it is listed under; nullptr: hidden (started by another)
  const char* usage;    // "run CONFIG"
  const char* summary;
  const char* example;  // a whole command line
  int (*run)(const Args&);
};

const Command kCommands[] = {
    {"run and compare", "run CONFIG", "run every policy of a YAML experiment and compare them (--seeds for several)",
     "orchestra run configs/quickstart.yaml", experiments::command_run},
    {"run and compare", "compare DIR...", "tables (Markdown, CSV) of finished runs and, with --plot, figures",
     "orchestra compare results/quickstart --plot", experiments::command_compare},
    {"learn a controller", "train CONFIG", "train an A3C barrier policy: parameter server + agent processes (ZeroMQ)",
     "orchestra train configs/a3c_train.yaml", experiments::command_train},
    {"learn a controller", "evaluate POLICY.pt CONFIG...", "judge a trained policy against orchestra-lcm, random moves and the best static T",
     "orchestra evaluate pretrained/orchestra-a3c.pt configs/heldout/*.yaml --seeds 1-3", experiments::command_evaluate},
    {"learn a controller", "draw TRAIN_CONFIG", "clusters drawn from a training config's distribution, as configs (validation sets)",
     "orchestra draw configs/a3c_general.yaml --count 8 --out results/validation", experiments::command_draw},
    {"learn a controller", "surrogate log|fit|calibrate|fidelity|pick|hardest", "the surrogate of training: log real rounds, fit it, calibrate it, measure its fidelity, pick a static T, find hard clusters",
     "orchestra surrogate fit results/rounds --out surrogate.json", experiments::command_surrogate},
    {"learn a controller", "soup POLICY.pt...", "one policy whose weights are the mean of several runs' (a model soup)",
     "orchestra soup a.pt b.pt --out soup.pt", experiments::command_soup},
    {"learn a controller", "redeploy POLICY.pt", "the same network with another start and bounds recorded in its file",
     "orchestra redeploy a.pt --start planned --planned-min-T-x-start 0.25 --planned-max-T-x-start 1 --out b.pt", experiments::command_redeploy},
    {"learn a controller", "serve CONFIG", "the A3C parameter server alone, for agents on other machines",
     "orchestra serve configs/a3c_train.yaml --bind tcp://0.0.0.0:5555 --keys keys.txt", experiments::command_serve},
    {"learn a controller", "agent CONFIG", "one A3C agent: --connect tcp://HOST:PORT",
     "orchestra agent configs/a3c_train.yaml --connect tcp://server:5555 --keys keys.txt", experiments::command_agent},
    {"real clusters", "launch CONFIG", "run a cluster.mode: real experiment on N processes (c10d Gloo/NCCL)",
     "orchestra launch --nproc 2 configs/real_quick.yaml", experiments::command_launch},
    {"real clusters", "calibrate REAL_DIR", "fit a simulated cluster to a real run (time models, network, round overhead)",
     "orchestra calibrate results/real_quick --out calibrated.yaml", experiments::command_calibrate},
    {"real clusters", "profile", "measure this machine's batch-time curve (LBB Alg. 1), JSON for balance",
     "orchestra profile --model cnn > host-a.json", experiments::command_profile},
    {"tools", "balance FILE", "split a global batch among workers by their time models (LBB Eq. 3)",
     "orchestra balance host-a.json", experiments::command_balance},
    {"tools", "keygen FILE", "CURVE keys for serve/agent on a non-loopback address", "orchestra keygen keys.txt",
     experiments::command_keygen},
    {nullptr, "worker", "", "", experiments::command_worker},  // one process of a launch
};

std::string name_of(const Command& c) {
  const std::string usage = c.usage;
  return usage.substr(0, usage.find(' '));
}

std::string help_text() {
  std::string text =
      "usage: orchestra COMMAND [ARGS]   (orchestra COMMAND --help for each)\n\n"
      "Tune the synchronization barrier of local-SGD training on heterogeneous clusters.\n";
  std::string task;
  for (const auto& c : kCommands) {
    if (!c.task) continue;
    if (task != c.task) text += "\n" + std::string(c.task) + ":\n";
    task = c.task;
    // A usage wider than the column stands on its own line, the summary under the others'.
    char line[512];
    if (std::strlen(c.usage) > 16) {
      text += "  " + std::string(c.usage) + "\n";
      std::snprintf(line, sizeof line, "  %-16s %s\n  %-16s e.g. %s\n", "", c.summary, "", c.example);
    } else {
      std::snprintf(line, sizeof line, "  %-16s %s\n  %-16s e.g. %s\n", c.usage, c.summary, "", c.example);
    }
    text += line;
  }
  return text + "\n  help             this text\n";
}

}  // namespace

int main(int argc, char** argv) {
  experiments::use_surrogate_barrier_planner();  // configs may name planned-t
  std::map<std::string, int (*)(const Args&)> commands;
  for (const auto& c : kCommands) commands[name_of(c)] = c.run;
  if (argc < 2 || std::string(argv[1]) == "help" || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << help_text();
    return argc < 2 ? 2 : 0;
  }
  const auto command = commands.find(argv[1]);
  if (command == commands.end()) {
    std::cerr << "orchestra: unknown command '" << argv[1] << "' (try: orchestra help)\n";
    return 2;
  }
  try {
    const int code = command->second(Args(argv + 2, argv + argc));
    // What went to stdout is the command's product (balance's split, compare's table): a full
    // disk or a closed pipe lost it, and the exit said 0.
    if (!std::cout.flush())
      throw common::SystemError("cannot write to standard output (" + std::string(std::strerror(errno)) + "): what was printed is lost");
    return code;
  } catch (const common::UsageError& e) {
    // One line, as every other error: the help is one flag away (`worker` has none: launch starts it).
    const std::string name = argv[1];
    std::cerr << "orchestra " << name << ": " << e.what();
    if (name != "worker") std::cerr << " (try: orchestra " << name << " --help)";
    std::cerr << "\n";
    return e.exit_code();
  } catch (const common::Error& e) {
    std::cerr << "orchestra: " << e.kind() << ": " << e.what() << "\n";
    return e.exit_code();
  } catch (const c10::Error& e) {
    // libtorch's own message (an allocation that failed, say) without its stack of frames: one line.
    const std::string message = e.what_without_backtrace();
    std::cerr << "orchestra: error: libtorch: " << message.substr(0, message.find('\n')) << "\n";
    return static_cast<int>(common::ExitCode::Failure);
  } catch (const std::exception& e) {
    std::cerr << "orchestra: error: " << e.what() << "\n";
    return static_cast<int>(common::ExitCode::Failure);
  }
}
