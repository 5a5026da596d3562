#include "orchestra/rl/local_sgd_barrier_env.hpp"

#include "env/surrogate/surrogate_env.hpp"
#include "env/train/workload_task.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace orchestra {
namespace {

[[noreturn]] void bad_config(const std::string& field, const std::string& message) {
  throw std::invalid_argument("orchestra RL environment: " + field + ": " + message);
}

void validate(const LocalSgdBarrierEnvConfig& c) {
  if (c.training.timing_only)
    bad_config("training.timing_only",
               "the barrier-tuning environment needs test accuracy (the Eq. 1 reward and the target-accuracy "
               "termination); timing-only runs have none. Use the orchestra-lcm or fixed-t policy for timing studies");
  if (c.distribution) {
    validate(*c.distribution);
  } else if (c.cluster.num_workers() < 1) {
    bad_config("cluster", "needs at least one worker");
  }
  if (c.global_batch < 1) bad_config("global_batch", "expected a positive integer, got " + std::to_string(c.global_batch));
  if (c.budget.max_epochs < 1)
    bad_config("budget.max_epochs", "expected an integer >= 1, got " + std::to_string(c.budget.max_epochs));
  if (!(std::isfinite(c.budget.max_sim_seconds) && c.budget.max_sim_seconds >= 0))
    bad_config("budget.max_sim_seconds", "expected seconds >= 0 (0 = no limit), got " + std::to_string(c.budget.max_sim_seconds));
  if (!(std::isfinite(c.budget.max_reference_epochs) && c.budget.max_reference_epochs >= 0))
    bad_config("budget.max_reference_epochs", "expected a number >= 0 (0 = no limit), got " + std::to_string(c.budget.max_reference_epochs));
  if (!(std::isfinite(c.eval_every_reference_rounds) && c.eval_every_reference_rounds >= 0))
    bad_config("eval_every_reference_rounds", "expected a number >= 0, got " + std::to_string(c.eval_every_reference_rounds));
  if (!(std::isfinite(c.time_reward_rounds) && c.time_reward_rounds > 0))
    bad_config("time_reward_rounds", "expected a number > 0, got " + std::to_string(c.time_reward_rounds));
  if (!(std::isfinite(c.exploring_start.lo) && std::isfinite(c.exploring_start.hi) && c.exploring_start.lo > 0 &&
        c.exploring_start.lo <= c.exploring_start.hi))
    bad_config("exploring_start", "expected [lo, hi] with 0 < lo <= hi, got [" + std::to_string(c.exploring_start.lo) + ", " +
                                      std::to_string(c.exploring_start.hi) + "]");
  if (!(std::isfinite(c.move_cost_rounds) && c.move_cost_rounds >= 0))
    bad_config("move_cost_rounds", "expected a number >= 0, got " + std::to_string(c.move_cost_rounds));
  if (c.move_cost_rounds > 0 && c.reward != LocalSgdBarrierEnvConfig::Reward::Time)
    bad_config("move_cost_rounds", "is charged in the time reward's units; it needs reward: time");
  if (c.surrogate) {
    const std::string why = env::task_mismatch(c.surrogate->task, env::wanted_task(c.data, c.training, c.global_batch));
    if (!why.empty()) bad_config("surrogate", why);
  }
  if (!(std::isfinite(c.focus_share) && c.focus_share >= 0 && c.focus_share <= 1))
    bad_config("focus_share", "expected a share in [0, 1], got " + std::to_string(c.focus_share));
  if (c.focus_share > 0 && c.focus_draws.empty()) bad_config("focus_share", "needs at least one focus cluster (focus_draws)");
  if (!c.focus_draws.empty() && !c.distribution) bad_config("focus_draws", "are draws of a cluster distribution; there is none");
  if (!(c.budget.target_accuracy > 0 && c.budget.target_accuracy <= 1))
    bad_config("budget.target_accuracy", "expected a number in (0, 1], got " + std::to_string(c.budget.target_accuracy));
  BarrierController check(c.controller);  // its constructor validates the controller options
}

}  // namespace

std::uint64_t cluster_draw_seed(const LocalSgdBarrierEnvConfig& config, std::uint64_t episode_seed) {
  if (config.focus_share > 0 && !config.focus_draws.empty()) {
    // 53-bit uniform draws, portable across standard libraries (as agents::sample_index).
    const double u = static_cast<double>(env::derive_seed(episode_seed, 37) >> 11) * 0x1.0p-53;
    if (u < config.focus_share) return config.focus_draws[env::derive_seed(episode_seed, 41) % config.focus_draws.size()];
  }
  return env::derive_seed(episode_seed, 23);
}

LocalSgdBarrierEnv::LocalSgdBarrierEnv(LocalSgdBarrierEnvConfig config, std::shared_ptr<const env::DatasetPair> data)
    : config_(std::move(config)), data_(std::move(data)), reward_(0.0, config_.reward_record) {
  validate(config_);
  if (config_.controller.horizon_epochs == 0) config_.controller.horizon_epochs = config_.budget.max_epochs;
  if (config_.surrogate) {
    data_ = nullptr;
    train_samples_ = config_.surrogate->task.train_samples;
    return;
  }
  // Loaded once: episodes differ in the replicas' initialization, the data order and the noise, not
  // in the data set itself.
  if (!data_) data_ = std::make_shared<const env::DatasetPair>(env::load_dataset(config_.data, config_.data_seed));
  train_samples_ = data_->train.size();
}

const BarrierController& LocalSgdBarrierEnv::controller() const {
  if (!controller_) throw std::logic_error("orchestra RL environment: controller() before reset()");
  return *controller_;
}

ResetResult LocalSgdBarrierEnv::reset(std::uint64_t seed) {
  cluster_ = config_.cluster;
  network_ = config_.network;
  if (config_.distribution) {
    const DrawnCluster drawn = draw_cluster(*config_.distribution, cluster_draw_seed(config_, seed), config_.global_batch, train_samples_);
    cluster_ = drawn.cluster;
    network_ = drawn.network;
  }
  env::EnvSpec spec;
  spec.simulation.cluster = cluster_;
  spec.simulation.network = network_;
  spec.simulation.global_batch = config_.global_batch;
  spec.simulation.message_bytes = network_.message_bytes;
  spec.training = config_.training;
  spec.training.planned_epochs = config_.budget.max_epochs;  // the cosine schedule spans the episode
  if (config_.surrogate) {
    env::SurrogateEnvSpec surrogate;
    surrogate.simulation = spec.simulation;
    surrogate.simulation.shards = spec.training.shards;
    surrogate.cosine_lr = spec.training.lr_schedule == env::LrSchedule::Cosine;
    surrogate.planned_epochs = spec.training.planned_epochs;
    env_ = std::make_unique<env::SurrogateEnv>(surrogate, config_.surrogate, seed);
  } else {
    spec.batching = config_.batching;
    env_ = std::make_unique<env::LocalSgdEnv>(spec, data_, seed, env::input_shape_of(config_.data));
  }

  controller_.emplace(config_.controller);
  controller_->start(env_->view());
  reference_round_ms_ = controller_->barrier_ms() + controller_->comm_ms();
  double samples_per_round = 0;
  for (std::size_t n = 0; n < controller_->local_steps().size(); ++n)
    samples_per_round += static_cast<double>(controller_->local_steps()[n]) * controller_->batch_sizes()[n];
  reference_epoch_ms_ = std::ceil(static_cast<double>(train_samples_) / std::max(1.0, samples_per_round)) * reference_round_ms_;
  if (config_.exploring_start.lo != 1.0 || config_.exploring_start.hi != 1.0)
    controller_->place_barrier(controller_->start_barrier_ms() * draw_in(config_.exploring_start, env::derive_seed(seed, 29)));
  episode_start_ms_ = env_->clock_ms();

  const env::EvalResult untrained = env_->evaluate();
  last_eval_ = untrained;
  last_eval_ms_ = env_->clock_ms();
  reward_.reset(untrained.accuracy);
  last_reward_ = RewardResult{};
  trainsteps_ = 0;
  epochs_ = 0;
  over_ = false;

  ResetResult result;
  result.observation = controller_->observation();
  result.info.barrier_ms = controller_->barrier_ms();
  result.info.clock_ms = env_->clock_ms();
  result.info.accuracy = untrained.accuracy;
  result.info.loss = untrained.loss;
  result.info.reached_target = untrained.accuracy >= config_.budget.target_accuracy;
  return result;
}

StepResult LocalSgdBarrierEnv::step(int action) {
  if (action < -max_move() || action > max_move())
    throw std::invalid_argument("orchestra RL environment: step(): action must be " + allowed_moves(max_move()) + ", got " +
                                std::to_string(action));
  if (!env_) throw std::logic_error("orchestra RL environment: step() before reset()");
  if (over_)
    throw std::invalid_argument("orchestra RL environment: step() after the episode ended (epoch " +
                                std::to_string(epochs_) + "); call reset() first");

  // 3.1.3: "The agent will try to adjust this value at the beginning of each epoch" (or window).
  const double barrier_before_ms = controller_->barrier_ms();
  controller_->move_barrier(action);
  const double barrier_ms = controller_->barrier_ms();
  const double start_ms = env_->clock_ms();
  bool evaluated = false;
  bool window_closed = false;
  while (!window_closed) {
    env::PlanContext context;
    context.round = env_->rounds();
    context.epoch = env_->epoch();
    context.epoch_start = !env_->in_epoch();
    context.clock_ms = env_->clock_ms();
    const env::RoundReport report = env_->run_round(controller_->plan(context));
    for (const auto& w : report.workers) trainsteps_ += w.local_steps;
    controller_->observe_round(report);
    window_closed = controller_->closes_window(report);
    if (report.epoch_end) {
      const env::EpochReport epoch = env_->finish_epoch();
      controller_->observe_epoch(epoch);
      ++epochs_;
      last_eval_ = {epoch.accuracy, epoch.loss};
      evaluated = true;
    }
  }
  const double step_ms = env_->clock_ms() - start_ms;
  const bool out_of_epochs = epochs_ >= config_.budget.max_epochs;
  const bool out_of_time = (config_.budget.max_sim_seconds > 0 && env_->clock_ms() >= config_.budget.max_sim_seconds * 1000.0) ||
                           (config_.budget.max_reference_epochs > 0 &&
                            env_->clock_ms() - episode_start_ms_ >= config_.budget.max_reference_epochs * reference_epoch_ms_);
  const bool due = config_.eval_every_reference_rounds <= 0 ||
                   env_->clock_ms() - last_eval_ms_ >= config_.eval_every_reference_rounds * reference_round_ms_;
  if (!evaluated && (due || out_of_epochs || out_of_time)) {
    last_eval_ = env_->evaluate();
    evaluated = true;
  }
  last_reward_ = RewardResult{};
  if (evaluated) {
    // Eq. 1's p over the time since the previous evaluation.
    last_reward_ = reward_.observe(last_eval_.accuracy, env_->clock_ms() - last_eval_ms_, static_cast<double>(trainsteps_));
    last_eval_ms_ = env_->clock_ms();
  }

  StepResult result;
  result.observation = controller_->observation();
  const double unit_ms = config_.time_reward_rounds * reference_round_ms_;
  const double elapsed_ms = env_->clock_ms() - episode_start_ms_;
  switch (config_.reward) {
    case LocalSgdBarrierEnvConfig::Reward::Time:
      result.reward = -step_ms / unit_ms;
      if (barrier_ms != barrier_before_ms) result.reward -= config_.move_cost_rounds / config_.time_reward_rounds;
      break;
    case LocalSgdBarrierEnvConfig::Reward::LogTime:  // telescopes to -ln(1 + time / unit)
      result.reward = -std::log((unit_ms + elapsed_ms) / (unit_ms + elapsed_ms - step_ms));
      break;
    case LocalSgdBarrierEnvConfig::Reward::Eq1:
      result.reward = static_cast<double>(last_reward_.reward);
      break;
  }
  result.info.epoch = epochs_;
  result.info.rounds = env_->rounds();
  result.info.barrier_ms = barrier_ms;
  result.info.step_ms = step_ms;
  result.info.clock_ms = env_->clock_ms();
  result.info.accuracy = last_eval_.accuracy;
  result.info.loss = last_eval_.loss;
  result.info.evaluated = evaluated;
  result.info.reached_target = evaluated && last_eval_.accuracy >= config_.budget.target_accuracy;
  result.terminated = result.info.reached_target;
  result.truncated = !result.terminated && (out_of_epochs || out_of_time);
  // A miss costs the time it took once more: without it, ending the budget quickly at a barrier too
  // large to learn (a few long rounds) would return more than reaching the target slowly.
  if (result.truncated && config_.reward == LocalSgdBarrierEnvConfig::Reward::Time) result.reward -= elapsed_ms / unit_ms;
  if (result.truncated && config_.reward == LocalSgdBarrierEnvConfig::Reward::LogTime) result.reward -= std::log(2.0);
  over_ = result.terminated || result.truncated;
  return result;
}

}  // namespace orchestra
