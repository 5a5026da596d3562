// configs/controller_task.yaml as the tests read it: its Fashion-MNIST from the tests' folder
// (configure's ORCHESTRA_TEST_FASHION_MNIST). The shipped workload names Debian's folder, which a
// GPU machine's unpacked copy is not; a training config beside it (a3c_general.yaml) then loads as
// the shipped one does.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "test_helpers.hpp"

namespace testing {

// Writes `folder`/controller_task.yaml (the folder created if missing).
inline void write_controller_task(const std::filesystem::path& folder) {
  std::string task = read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/controller_task.yaml");
  const std::string dataset = "  dataset: fashion-mnist\n";
  const auto at = task.find(dataset);
  REQUIRE(at != std::string::npos);
  task.insert(at + dataset.size(), "  path: \"" + fashion_mnist_dir() + "\"\n");
  std::filesystem::create_directories(folder);
  write_text(folder / "controller_task.yaml", task);
}

}  // namespace testing
