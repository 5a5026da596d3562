// The extension points beside the policies are tables too (docs/ARCHITECTURE.md, "Adding things"):
// datasets (env/train/dataset_registry.hpp), models (env/train/models.hpp) and c10d backends
// (env/real/c10d_backend_registry.hpp). What the README's config reference and the binary's
// --help list is exactly each table, in its order, and a name outside a table is one line
// listing the table's names.
#include <doctest/doctest.h>

#include <regex>
#include <sstream>

#include "env/real/c10d_backend_registry.hpp"
#include "env/train/dataset_registry.hpp"
#include "env/train/models.hpp"
#include "test_helpers.hpp"

namespace {

// The names a `--help` lists under the heading that starts with `heading`: the first word of each
// indented line up to the next line that is not indented.
std::vector<std::string> help_list(const std::string& command, const std::string& heading) {
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " " + command + " --help");
  REQUIRE(r.exit_code == 0);
  const auto at = r.output.find("\n" + heading);
  REQUIRE_MESSAGE(at != std::string::npos, command << " --help has no '" << heading << "' list");
  std::istringstream lines(r.output.substr(at + 1));
  std::string line;
  std::getline(lines, line);  // the heading
  std::vector<std::string> names;
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    if (line.rfind("   ", 0) == 0) continue;  // a continuation line
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

// The alternatives in the README config reference's comment on `key:` ("# a | b (note) | c").
std::vector<std::string> readme_choices(const std::string& key) {
  const std::string readme = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/README.md");
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(readme, m, std::regex("\n  " + key + ": [^#\n]*# ([^\n]*)")), "README: no `" << key << ":` line");
  std::vector<std::string> names;
  std::istringstream alternatives(m[1].str());
  for (std::string part; std::getline(alternatives, part, '|');) {
    std::istringstream words(part);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

std::string config_with(const std::string& data, const std::string& model) {
  return "name: t\ndata: " + data + "\nmodel: " + model +
         "\ntraining: {epochs: 1}\ncluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1, 0.1]}}\npolicies: [dsgd]\n";
}

}  // namespace

TEST_CASE("datasets: the README's config reference, orchestra run --help and profile --help list exactly the dataset table") {
  const auto names = env::dataset_names();
  REQUIRE(names.size() >= 4);
  CHECK(readme_choices("dataset") == names);
  CHECK(help_list("run", "datasets") == names);
  CHECK(help_list("profile", "datasets") == names);
  // Every row gives its input shape without reading a file; the synthetic one reads as well.
  for (const auto& kind : env::dataset_registry()) {
    CAPTURE(kind.name);
    env::DataSpec spec;
    spec.dataset = kind.name;
    CHECK(kind.input_shape(spec).size() == 3);
    CHECK(std::string(kind.summary).size() > 10);
  }
  env::DataSpec synthetic;
  synthetic.dataset = "synthetic";
  synthetic.synthetic_train = 16;
  const env::DatasetPair pair = env::load_dataset(synthetic, 1);
  CHECK(pair.train.images.sizes().vec() == std::vector<std::int64_t>{16, 1, 12, 12});
  CHECK_THROWS_AS(env::dataset_kind("imagenet"), std::invalid_argument);
}

TEST_CASE("models: the README's config reference, orchestra run --help and profile --help list exactly the model table") {
  const auto names = env::model_names();
  REQUIRE(names.size() >= 3);
  CHECK(readme_choices("arch") == names);
  CHECK(help_list("run", "models") == names);
  CHECK(help_list("profile", "models") == names);
  // Every row makes its model: the CIFAR shape fits them all.
  for (const auto& kind : env::model_registry()) {
    CAPTURE(kind.name);
    env::ModelSpec spec;
    spec.arch = kind.name;
    spec.hidden = {8};
    const auto model = env::make_model(spec, {3, 32, 32}, 10);
    CHECK(model->forward(torch::zeros({2, 3, 32, 32})).sizes().vec() == std::vector<std::int64_t>{2, 10});
  }
  CHECK_THROWS_AS(env::model_kind("vgg"), std::invalid_argument);
}

TEST_CASE("datasets and models: a name outside the table is a config error naming file:line and every name in it") {
  testing::TempDir dir;
  testing::write_text(dir / "d.yaml", config_with("{dataset: imagenet}", "{arch: mlp}"));
  auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "d.yaml") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("d.yaml:2: data.dataset:") != std::string::npos);
  for (const auto& name : env::dataset_names()) CHECK(r.output.find(name) != std::string::npos);
  testing::write_text(dir / "m.yaml", config_with("{dataset: synthetic}", "{arch: vgg}"));
  r = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "m.yaml") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("m.yaml:3: model.arch:") != std::string::npos);
  for (const auto& name : env::model_names()) CHECK(r.output.find(name) != std::string::npos);
  // A dataset that reads files and has no default folder needs data.path.
  testing::write_text(dir / "p.yaml", config_with("{dataset: mnist}", "{arch: mlp}"));
  r = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "p.yaml") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("data.path: dataset 'mnist' needs a path to the folder holding its files") != std::string::npos);
}

TEST_CASE("c10d backends: orchestra launch --help lists exactly the backend table, another name is one line listing it") {
  const auto names = env::c10d_backend_names();
  REQUIRE(names.size() >= 2);
  CHECK(names.front() == "gloo");  // the default comes first
  CHECK(help_list("launch", "c10d backends") == names);
  for (const auto& b : env::c10d_backends()) {
    CAPTURE(b.name);
    CHECK(env::find_c10d_backend(b.name) == &b);
    // A backend this build compiled has a maker; one it did not says why it cannot run.
    if (!b.make) CHECK_FALSE(b.unavailable().empty());
  }
  CHECK(env::find_c10d_backend("mpi") == nullptr);
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch --backend mpi --nproc 1 x.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra launch: --backend: expected gloo or nccl, got 'mpi' (try: orchestra launch --help)\n");
}
