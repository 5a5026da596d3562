// A workload changed from the command line on every config a command reads (`orchestra evaluate
// --epochs N --target A`, `orchestra surrogate fidelity|calibrate` likewise): the same clusters
// judged to another target or within another budget without copying the suite's files. Near the
// model's plateau (86% for the controller task's MLP) a changing T pays more than at the default
// 84% (BENCHMARKS.md, "Near the model's plateau"), so the target is part of what a controller is
// judged on.
#pragma once

#include <optional>

namespace experiments {

struct WorkloadChange {
  std::optional<int> epochs;              // training.epochs
  std::optional<double> target_accuracy;  // training.target_accuracy
  bool empty() const { return !epochs && !target_accuracy; }
};

}  // namespace experiments
