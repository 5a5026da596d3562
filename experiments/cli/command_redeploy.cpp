// `orchestra redeploy`: the same network with another deployment recorded in its policy file (where
// T starts and its bounds around that start), so that `orchestra-a3c` with no keys deploys it so.
// How the shipped policy became "start at the plan, bounded to [T/4, T]" (BENCHMARKS.md, the
// twenty-second held-out suite) without retraining: the weights are untouched.
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "agents/policy_file.hpp"
#include "common/own_output.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"

namespace experiments {
namespace {

const char* kHelp = R"(usage: orchestra redeploy POLICY.pt [--start lcm|planned] [--min-T-x-start X] [--max-T-x-start X]
                          [--planned-min-T-x-start X] [--planned-max-T-x-start X] --out FILE

Writes to FILE (atomically) POLICY.pt's network with what its file records about deployment
changed: where T starts and the bounds around that start. The same as giving the keys to every
`orchestra-a3c` entry, recorded once: an entry's own keys still win. The weights, moves, interval
and state are the file's; the training record gains "redeployed_from" (the input file).

  --start lcm|planned   the T the network moves from: LCM's T* (3.1.1), or the static T planned-t
                        plans on the surrogate of training (LCM's T* where the plan is a guess)
  --min-T-x-start X     T never below X times its start (0 = no bound)
  --max-T-x-start X     T never above X times its start (0 = no bound)
  --planned-min-T-x-start X, --planned-max-T-x-start X
                        the same bounds where the start is planned (0 = the two above): from LCM's
                        T*, where a plan cannot be made or is a guess, the two above apply
  --out FILE            the new policy file (required)

example (the shipped policy, from the network trained with LCM's start):
  orchestra redeploy pretrained/candidates/genet-s14-3-2000.pt --start planned --planned-min-T-x-start 0.25 \
      --planned-max-T-x-start 1 --out pretrained/orchestra-a3c.pt
)";

}  // namespace

int command_redeploy(const Args& args) {
  std::string input, out;
  std::optional<agents::BarrierStart> start;
  std::optional<double> min_x, max_x, planned_min_x, planned_max_x;
  for (ArgCursor arg(args); arg.next();) {
    if (arg.is_help()) {
      std::cout << kHelp;
      return 0;
    }
    if (arg.is("--out")) {
      out = arg.value();
    } else if (arg.is("--start")) {
      const std::string value = arg.value();
      if (value != "lcm" && value != "planned") throw UsageError("--start: expected lcm or planned, got " + value);
      start = value == "planned" ? agents::BarrierStart::Planned : agents::BarrierStart::Lcm;
    } else if (arg.is("--min-T-x-start")) {
      min_x = arg.number(0, 1e6);
    } else if (arg.is("--max-T-x-start")) {
      max_x = arg.number(0, 1e6);
    } else if (arg.is("--planned-min-T-x-start")) {
      planned_min_x = arg.number(0, 1e6);
    } else if (arg.is("--planned-max-T-x-start")) {
      planned_max_x = arg.number(0, 1e6);
    } else if (arg.is_option()) {
      throw UsageError("unknown option " + arg.arg());
    } else if (input.empty()) {
      input = arg.arg();
    } else {
      throw UsageError("expected one POLICY file, got " + input + " and " + arg.arg());
    }
  }
  if (input.empty()) throw UsageError("expected a POLICY file");
  if (out.empty()) throw UsageError("--out FILE is required");
  // Only a policy file is replaced (the help's example replaces the shipped one): a user's file
  // of another kind at --out was replaced by a zip.
  common::check_replaceable_output(out, "--out", "a policy file", agents::kPolicyFileMarker);
  if (!start && !min_x && !max_x && !planned_min_x && !planned_max_x)
    throw UsageError("nothing to change: give --start or a bound (--min-T-x-start, --max-T-x-start, --planned-...)");

  agents::A3cPolicy policy = agents::A3cPolicy::load(input);
  agents::PolicyControl control = policy.control();
  if (start) control.start = *start;
  if (min_x) control.min_barrier_x_start = *min_x;
  if (max_x) control.max_barrier_x_start = *max_x;
  if (planned_min_x) control.planned_min_barrier_x_start = *planned_min_x;
  if (planned_max_x) control.planned_max_barrier_x_start = *planned_max_x;
  // The controller's own checks (a floor above the ceiling, say), before anything is written.
  try {
    agents::check_control(control);
  } catch (const std::invalid_argument& e) {
    // The policy file's key names, said as the flags that set them.
    std::string text = e.what();
    for (const auto& [key, flag] : {std::pair{"planned_min_barrier_x_start", "--planned-min-T-x-start"}, std::pair{"planned_max_barrier_x_start", "--planned-max-T-x-start"},
                                    std::pair{"min_barrier_x_start", "--min-T-x-start"}, std::pair{"max_barrier_x_start", "--max-T-x-start"}})
      for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1))
        if (at == 0 || (text[at - 1] != '_' && text[at - 1] != '-')) text.replace(at, std::string(key).size(), flag);
    throw UsageError(std::string("the bounds given: ") + text);
  }
  std::map<std::string, std::string> training = policy.training();
  training["redeployed_from"] = input;
  const agents::A3cPolicy redeployed(policy.network(), policy.updates(), control, std::move(training));
  redeployed.save(out);
  std::cout << input << "'s network, starting at " << (control.start == agents::BarrierStart::Planned ? "the planned T" : "LCM's T*")
            << ", bounds x the start [" << control.min_barrier_x_start << ", " << control.max_barrier_x_start << "], from a planned T ["
            << control.planned_min_barrier_x_start << ", " << control.planned_max_barrier_x_start << "] (0: as from LCM's T*), written to " << out << "\n";
  return 0;
}

}  // namespace experiments
