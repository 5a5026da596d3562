// The barrier-tuning RL environment on real training against the same environment on the surrogate
// of training (issue 41): rounds per second and episodes per core-minute, measured in the same run
// on the same episodes (the training config's cluster distribution, exploring starts, budget and
// reward), a random action every round. Time is the process's CPU time, so the figures count the
// core's work and not the machine's other load; wall time is shown beside.
//
//   build/bench/bench_surrogate_env [--real N] [--surrogate M] [--config FILE] [--surrogate-file FILE]
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <random>
#include <string>

#include "env/surrogate/surrogate_file.hpp"
#include "env/train/compute_threads.hpp"
#include "experiments/runner/train_config.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Measured {
  int episodes = 0;
  long long rounds = 0;
  long long steps = 0;
  double cpu_s = 0, wall_s = 0;
  int reached = 0;
};

// `episodes` episodes from seed 1000 on, a uniformly random action every decision.
Measured run(orchestra::LocalSgdBarrierEnv& environment, int episodes) {
  Measured m;
  std::mt19937_64 rng(7);
  const double cpu = cpu_seconds();
  const auto wall = std::chrono::steady_clock::now();
  for (int e = 0; e < episodes; ++e) {
    environment.reset(1000 + static_cast<std::uint64_t>(e));
    orchestra::StepResult step;
    while (!environment.episode_over()) {
      step = environment.step(static_cast<int>(rng() % 3) - 1);
      ++m.steps;
    }
    m.rounds += step.info.rounds;
    m.reached += step.terminated ? 1 : 0;
    ++m.episodes;
  }
  m.cpu_s = cpu_seconds() - cpu;
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  return m;
}

void print(const char* name, const Measured& m) {
  std::printf("| %s | %d | %lld | %.2f | %.2f | %.0f | %.1f | %d |\n", name, m.episodes, m.rounds, m.cpu_s, m.wall_s, m.rounds / m.cpu_s,
              60.0 * m.episodes / m.cpu_s, m.reached);
}

}  // namespace

int main(int argc, char** argv) {
  int real_episodes = 6, surrogate_episodes = 3000;
  std::string config = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/a3c_general.yaml";
  std::string surrogate = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/surrogate-controller-task.json";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--real")) real_episodes = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--surrogate")) surrogate_episodes = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--config")) config = argv[i + 1];
    else if (!std::strcmp(argv[i], "--surrogate-file")) surrogate = argv[i + 1];
  }
  env::set_compute_threads(1);
  const experiments::TrainConfig train = experiments::load_train_config(config);
  orchestra::LocalSgdBarrierEnvConfig real_config = experiments::training_env_config(train, 0);
  orchestra::LocalSgdBarrierEnvConfig surrogate_config = real_config;
  surrogate_config.surrogate = env::read_surrogate(surrogate);
  orchestra::LocalSgdBarrierEnv real_env(real_config);  // loads the data set once, before the clock
  orchestra::LocalSgdBarrierEnv surrogate_env(surrogate_config);

  std::printf("%s, random actions, episodes from seed 1000; CPU time of this process (1 thread)\n\n", config.c_str());
  std::printf("| environment | episodes | rounds | CPU s | wall s | rounds per CPU s | episodes per core-minute | reached the target |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  // Interleaved halves, so that a change of the machine's load hits both.
  Measured real, fake;
  for (int half = 0; half < 2; ++half) {
    const Measured r = run(real_env, real_episodes / 2);
    const Measured s = run(surrogate_env, surrogate_episodes / 2);
    for (auto [total, part] : {std::pair<Measured*, const Measured*>{&real, &r}, {&fake, &s}}) {
      total->episodes += part->episodes;
      total->rounds += part->rounds;
      total->steps += part->steps;
      total->cpu_s += part->cpu_s;
      total->wall_s += part->wall_s;
      total->reached += part->reached;
    }
  }
  print("real training (LocalSgdEnv, libtorch)", real);
  print("surrogate (SurrogateEnv)", fake);
  std::printf("\nsurrogate / real: %.0fx episodes per core-minute, %.0fx rounds per CPU second\n",
              (fake.episodes / fake.cpu_s) / (real.episodes / real.cpu_s), (fake.rounds / fake.cpu_s) / (real.rounds / real.cpu_s));
  return 0;
}
