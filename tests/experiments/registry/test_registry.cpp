// The policy registry is the one list of policies: the README's table and `orchestra run --help`
// name exactly its policies, in its order, and the factory builds each of them.
#include <doctest/doctest.h>

#include <regex>
#include <sstream>

#include "experiments/config/config.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "test_helpers.hpp"

namespace {

// The names in the first column of the README's policy table (between its markers).
std::vector<std::string> readme_policies() {
  const std::string readme = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/README.md");
  const auto begin = readme.find("<!-- policies -->"), end = readme.find("<!-- /policies -->");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::istringstream lines(readme.substr(begin, end - begin));
  std::vector<std::string> names;
  const std::regex row(R"(^\| `([a-z0-9-]+)` \|)");
  std::smatch m;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, m, row)) names.push_back(m[1]);
  return names;
}

// The names `orchestra run --help` lists under "policies".
std::vector<std::string> help_policies() {
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " run --help");
  REQUIRE(r.exit_code == 0);
  const auto at = r.output.find("\npolicies");
  REQUIRE(at != std::string::npos);
  std::istringstream lines(r.output.substr(at + 1));
  std::string line;
  std::getline(lines, line);  // the heading
  std::vector<std::string> names;
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

}  // namespace

TEST_CASE("registry: the README's policy table lists exactly the registry's policies, in order") {
  CHECK(readme_policies() == experiments::policy_names());
}

TEST_CASE("registry: orchestra run --help lists exactly the registry's policies, in order") {
  CHECK(help_policies() == experiments::policy_names());
}

TEST_CASE("registry: names are unique, and an unknown name is a config error listing every known one") {
  auto names = experiments::policy_names();
  CHECK(names.size() == 11);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  const auto config = experiments::parse_config(R"(cluster:
  workers:
    - {name: a, time_model: {coefficients: [1, 0.1]}}
policies:
  - {name: lbbb}
)",
                                                "x.yaml");
  std::string known;
  for (const auto& n : experiments::policy_names()) known += (known.empty() ? "" : ", ") + n;
  CHECK_THROWS_WITH_AS(experiments::make_policy(config.policies[0], config),
                       ("x.yaml:5: policies[0].name: unknown policy 'lbbb' (known: " + known + ")").c_str(), common::ConfigError);
}

TEST_CASE("registry: the factory builds every policy that needs no file") {
  for (const auto& kind : experiments::policy_registry()) {
    const std::string name = kind.name;
    if (name == "orchestra-a3c") continue;  // needs a trained policy file (tests/agents)
    const std::string entry = name == "fixed-t" ? "{name: fixed-t, T_ms: 100}" : "{name: " + name + "}";
    const auto config = experiments::parse_config("cluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1, 0.1]}}\n"
                                                  "policies:\n  - " + entry + "\n",
                                                  "x.yaml");
    INFO(name);
    const auto built = experiments::make_policy(config.policies[0], config);
    CHECK(built.policy != nullptr);
    CHECK(built.resolved["name"] == name);
  }
}
