// The `orchestra` subcommands. Each takes its arguments (after the subcommand name) and returns
// the exit status; bad input throws, and main prints one line and exits non-zero.
#pragma once

#include <string>

#include "common/errors.hpp"
#include <vector>

namespace experiments {

using Args = std::vector<std::string>;

int command_run(const Args& args);
int command_launch(const Args& args);  // real multi-process runs on c10d (command_launch.cpp)
int command_worker(const Args& args);  // hidden: one process of a launch
int command_balance(const Args& args);  // LBB Eq. 3 for given models, JSON in and out
int command_profile(const Args& args);  // LBB Alg. 1 on this machine, JSON out
int command_compare(const Args& args);  // tables and plots of finished runs
int command_calibrate(const Args& args);  // a real run -> a calibrated simulated config
int command_train(const Args& args);   // A3C: server + agent processes (command_train.cpp)
int command_evaluate(const Args& args);  // a trained policy against LCM, random and the best static T
int command_draw(const Args& args);    // clusters drawn from a training distribution, as configs
int command_surrogate(const Args& args);  // the surrogate of training: log, fit, fidelity
int command_soup(const Args& args);    // the mean of several policies' weights (a model soup)
int command_redeploy(const Args& args);  // a policy file with another start and bounds recorded
int command_serve(const Args& args);   // A3C: the parameter server alone
int command_agent(const Args& args);   // A3C: one agent (hidden in help: started by train)
int command_keygen(const Args& args);  // CURVE keys for serve/agent

// A wrong command line throws common::UsageError; main prints the message after the subcommand.
using common::UsageError;

}  // namespace experiments
