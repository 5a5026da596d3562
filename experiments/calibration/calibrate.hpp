// `orchestra calibrate`: from a real run's measured rounds to the parameters of a simulated
// cluster that should keep the same time: each worker's batch-time model (LBB Eq. 1), the
// network's alpha-beta, and the fixed costs of a real round (env::RoundOverhead).
//
// What is fitted to what (every number in rounds.csv is on the real run's wall clock):
//   - worker time models: each round's (local batch, compute_ms / local_steps) per worker, over
//     every policy of the run, with the config's perturbations divided out (a real worker's
//     measured step is its own time stretched by them, env::RealWorker::timed; the calibrated
//     config keeps the perturbations, so they are not counted twice);
//   - the network: each round's comm_ms (the all-reduce as the last worker to arrive saw it);
//   - the round overhead: round_ms - comm_ms - the slowest compute, and the gaps between rounds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "experiments/calibration/network_fit.hpp"
#include "experiments/calibration/overhead_fit.hpp"
#include "experiments/calibration/real_run.hpp"
#include "experiments/calibration/time_model_fit.hpp"
#include "experiments/config/config.hpp"

namespace experiments::calibration {

enum class PointSource { RealRounds, Profile };

struct WorkerCalibration {
  std::string name;
  std::string server;
  int max_batch = 0;
  PointSource source = PointSource::RealRounds;
  std::string profile_file;  // with PointSource::Profile
  TimeModelFit fit;
};

struct CalibrateOptions {
  double message_bytes = 0;  // the real run's all-reduce message (the model's parameters)
  // Points measured by `orchestra profile` for a worker (its "samples"), used instead of its
  // rounds: the way out when a real run measured too few batch sizes.
  std::map<std::string, std::vector<MeasuredStep>> profiles;
  std::map<std::string, std::string> profile_files;  // worker -> the file, for the comments
  FitRequirements need;
};

struct Calibration {
  std::string real_dir;
  std::vector<std::string> policies;
  std::size_t rounds = 0;
  std::vector<WorkerCalibration> workers;  // cluster order
  NetworkFit network;
  bool intra_server = true;  // the real run's workers share one server: the fit is the intra-server link
  OverheadFit overhead;
  double message_bytes = 0;
};

// The measured steps of one worker (cluster index `worker`), perturbations divided out.
std::vector<MeasuredStep> measured_steps(const RealRun& run, const experiments::ExperimentConfig& config, int worker);

// Throws common::DataError naming the worker (and saying what to do) when its rounds hold too few
// distinct batch sizes and no profile was given for it; also for a profile naming no worker.
Calibration calibrate(const RealRun& run, const experiments::ExperimentConfig& config, const CalibrateOptions& options);

// The residuals, one line per fit, for the terminal.
std::string calibration_report(const Calibration& c);

}  // namespace experiments::calibration
