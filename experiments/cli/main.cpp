// The `orchestra` command line: one binary, one subcommand per task.
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "common/errors.hpp"
#include "experiments/cli/commands.hpp"

namespace {

const char* kHelp = R"(usage: orchestra COMMAND [ARGS]   (orchestra COMMAND --help for each)

Tune the synchronization barrier of local-SGD training on heterogeneous clusters.

commands:
  run CONFIG       run every policy of a YAML experiment and compare them
  launch CONFIG    run a cluster.mode: real experiment on N processes (c10d Gloo/NCCL)
  balance FILE     split a global batch among workers by their time models (LBB Eq. 3)
  profile          measure this machine's batch-time curve (LBB Alg. 1), JSON for balance
  compare DIR...   compare finished runs: table (Markdown, CSV) and, with --plot, figures
  train CONFIG     train an A3C barrier policy: parameter server + agent processes (ZeroMQ)
  serve CONFIG     the A3C parameter server alone, for agents on other machines
  agent CONFIG     one A3C agent: --connect tcp://HOST:PORT
  keygen FILE      CURVE keys for serve/agent on a non-loopback address
  help             this text

example:
  orchestra run configs/quickstart.yaml
)";

}  // namespace

int main(int argc, char** argv) {
  using experiments::Args;
  const std::map<std::string, int (*)(const Args&)> commands = {
      {"run", experiments::command_run},
      {"launch", experiments::command_launch},
      {"worker", experiments::command_worker},  // hidden: started by launch
      {"balance", experiments::command_balance},
      {"profile", experiments::command_profile},
      {"compare", experiments::command_compare},
      {"train", experiments::command_train},
      {"serve", experiments::command_serve},
      {"agent", experiments::command_agent},
      {"keygen", experiments::command_keygen},
  };
  if (argc < 2 || std::string(argv[1]) == "help" || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << kHelp;
    return argc < 2 ? 2 : 0;
  }
  const auto command = commands.find(argv[1]);
  if (command == commands.end()) {
    std::cerr << "orchestra: unknown command '" << argv[1] << "' (try: orchestra help)\n";
    return 2;
  }
  try {
    return command->second(Args(argv + 2, argv + argc));
  } catch (const common::UsageError& e) {
    std::cerr << "orchestra " << argv[1] << ": " << e.what() << "\n";
    return e.exit_code();
  } catch (const common::Error& e) {
    std::cerr << "orchestra: " << e.kind() << ": " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "orchestra: error: " << e.what() << "\n";
    return static_cast<int>(common::ExitCode::Failure);
  }
}
