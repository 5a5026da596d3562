// `orchestra soup`: one policy whose weights are the mean of several policies' (a uniform model
// soup, agents/policy_soup.hpp), for runs of one recipe that differ only in their training seed.
#include <filesystem>
#include <iostream>

#include "agents/policy_file.hpp"
#include "agents/policy_soup.hpp"
#include "common/own_output.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"

namespace experiments {
namespace {

const char* kSoupHelp = R"(usage: orchestra soup POLICY.pt POLICY.pt... --out FILE

Writes to FILE (atomically) the policy whose every weight is the mean of the given policies'
(the uniform soup of Wortsman et al., ICML 2022): for networks fine-tuned from one start that
differ in their training seed, whose results on real training differ by as much as a change of
recipe does. Every policy must have the first's network shape and controller (how its moves act
on T); the soup keeps that controller and the first's training record, adds "soup_of" (the files,
in order) and counts the largest of their updates. Averaging networks trained from different
random starts gives no useful policy: judge a soup as any policy, with `orchestra evaluate`.

  --out FILE   the soup's policy file (required)

example:
  orchestra soup results/g13/policy.pt results/g14/policy.pt --out soup.pt
  orchestra evaluate soup.pt pretrained/orchestra-a3c.pt configs/heldout_tenth/*.yaml --seeds 1-3
)";

}  // namespace

int command_soup(const Args& args) {
  std::vector<std::string> inputs;
  std::string out;
  for (ArgCursor arg(args); arg.next();) {
    if (arg.is_help()) {
      std::cout << kSoupHelp;
      return 0;
    }
    if (arg.is("--out")) {
      out = arg.value();
    } else if (arg.is_option()) {
      throw UsageError("unknown option " + arg.arg());
    } else {
      inputs.push_back(arg.arg());
    }
  }
  if (inputs.size() < 2) throw UsageError("expected at least two POLICY files");
  if (out.empty()) throw UsageError("--out FILE is required");
  // The soup replaces only a policy file, and none of its ingredients (a user's notes at --out
  // were replaced by a zip, and an ingredient by the mean).
  common::check_replaceable_output(out, "--out", "a policy file", agents::kPolicyFileMarker);
  for (const std::string& path : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(path, out, ec))
      throw UsageError("--out " + out + ": is one of the policies averaged (" + path + "): write the soup to another file");
  }

  std::vector<agents::A3cPolicy> ingredients;
  for (const std::string& path : inputs) ingredients.push_back(agents::A3cPolicy::load(path));
  const agents::A3cPolicy soup = agents::average_policies(ingredients, inputs);
  soup.save(out);
  std::cout << "the mean of " << inputs.size() << " policies written to " << out << "\n";
  return 0;
}

}  // namespace experiments
