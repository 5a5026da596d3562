// Real mode, one worker slowed 3x: LBB's measured iteration time against DSGD's (issue 6: LBB must
// cut it by at least 40%). Runs `orchestra launch --nproc 2 configs/real_straggler.yaml` and reads
// both policies' rounds.csv; the figures go to BENCHMARKS.md.
//
//   build/bench/bench_real [CONFIG] [--out DIR] [--repeat N]   exit status 1 when the median cut
//                                                              over N runs (5) is under 40%
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct IterationStats {
  double mean_round_ms = 0;
  double mean_slowest_ms = 0;  // max over workers of compute: the barrier's part of the iteration
  double mean_compute_ms[2] = {0, 0};  // per worker (fast, slow)
  double mean_batch[2] = {0, 0};
  int rounds = 0;
};

// rounds.csv: round,epoch,worker,batch_size,local_steps,compute_ms,idle_ms,comm_ms,round_ms,...
// The first `skip` rounds are left out: first-touch allocation and, for LBB, its first tuning.
IterationStats read_rounds(const std::string& path, int skip) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read (did the run finish?)");
  std::string line;
  std::getline(in, line);
  std::map<long, int> seen;
  std::map<long, double> slowest;
  IterationStats s;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) f.push_back(cell);
    if (f.size() < 9) continue;
    const long round = std::stol(f[0]);
    if (round < skip) continue;
    const int worker = seen[round]++;
    if (worker > 1) continue;
    s.mean_compute_ms[worker] += std::stod(f[5]);
    slowest[round] = std::max(slowest[round], std::stod(f[5]));
    s.mean_batch[worker] += std::stod(f[3]);
    if (worker == 0) {
      s.mean_round_ms += std::stod(f[8]);
      ++s.rounds;
    }
  }
  if (s.rounds == 0) throw std::runtime_error(path + ": no rounds after the first " + std::to_string(skip));
  s.mean_round_ms /= s.rounds;
  for (const auto& [round, ms] : slowest) s.mean_slowest_ms += ms / s.rounds;
  for (int w = 0; w < 2; ++w) s.mean_compute_ms[w] /= s.rounds, s.mean_batch[w] /= s.rounds;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/real_straggler.yaml";
  std::string out = (std::filesystem::temp_directory_path() / "orchestra-bench-real").string();
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else config = a;
  }
  const std::string command = std::string(ORCHESTRA_BINARY) + " launch --nproc 2 " + config + " --out " + out + " --timeout 300 --quiet";
  std::cerr << "bench_real: " << command << " (" << repeat << " times)\n";
  // dsgd and lbb run one after the other inside each launch, so a change in the machine's state
  // between them (other tenants, frequency) skews one repetition; the median cut over several
  // repetitions is the figure, each one is printed.
  std::vector<double> cuts;
  std::printf("| run | policy | rounds | iteration (ms) | slowest compute (ms) | fast: batch, compute (ms) | slow (3x): batch, compute (ms) |\n|---|---|---:|---:|---:|---:|---:|\n");
  for (int run = 1; run <= repeat; ++run) {
    if (std::system((command + " > /dev/null").c_str()) != 0) {
      std::cerr << "bench_real: the run failed\n";
      return 2;
    }
    try {
      const IterationStats dsgd = read_rounds(out + "/dsgd/rounds.csv", 3), lbb = read_rounds(out + "/lbb/rounds.csv", 3);
      for (const auto& [name, s] : {std::pair<const char*, IterationStats>{"dsgd", dsgd}, {"lbb", lbb}})
        std::printf("| %d | %s | %d | %.1f | %.1f | %.0f, %.1f | %.0f, %.1f |\n", run, name, s.rounds, s.mean_round_ms,
                    s.mean_slowest_ms, s.mean_batch[0], s.mean_compute_ms[0], s.mean_batch[1], s.mean_compute_ms[1]);
      cuts.push_back(1.0 - lbb.mean_round_ms / dsgd.mean_round_ms);
      std::fflush(stdout);
    } catch (const std::exception& e) {
      std::cerr << "bench_real: " << e.what() << "\n";
      return 2;
    }
  }
  std::printf("\nLBB's cut of the mean iteration time against DSGD, per run:");
  for (double c : cuts) std::printf(" %.1f%%", 100.0 * c);
  std::sort(cuts.begin(), cuts.end());
  const double median = cuts.size() % 2 ? cuts[cuts.size() / 2] : 0.5 * (cuts[cuts.size() / 2 - 1] + cuts[cuts.size() / 2]);
  std::printf("\nmedian %.1f%% (required: at least 40%%)\n", 100.0 * median);
  return median >= 0.40 ? 0 : 1;
}
