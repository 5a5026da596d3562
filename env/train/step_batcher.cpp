#include "env/train/step_batcher.hpp"

#include <stdexcept>
#include <string>

namespace env {

StepBatcher::Participation::Participation(StepBatcher& batcher, int member) : batcher_(batcher), member_(member) {
  batcher_.join(member_);
}

StepBatcher::Participation::~Participation() { batcher_.leave(member_); }

void StepBatcher::join(int member) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!members_.insert(member).second) throw std::logic_error("StepBatcher: member " + std::to_string(member) + " joined twice");
  ++participants_;
}

void StepBatcher::leave(int member) {
  const std::lock_guard<std::mutex> lock(mutex_);
  members_.erase(member);
  --participants_;
  run_if_all_wait();  // the others may have been waiting only for this one
}

std::int64_t StepBatcher::merged_rounds() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return merged_rounds_;
}

std::vector<double> StepBatcher::local_steps(int member, BatchedReplicaSet& replicas, const Dataset& train,
                                             const std::vector<std::vector<IndexSpan>>& batches) {
  Request request;
  request.replicas = &replicas;
  request.train = &train;
  request.batches = &batches;
  std::unique_lock<std::mutex> lock(mutex_);
  if (members_.count(member) == 0)  // not taking part: nobody to merge with, so it steps alone
    return BatchedReplicaSet::local_steps_together({{&replicas, &train, &batches}})[0];
  if (!waiting_.emplace(member, &request).second)
    throw std::logic_error("StepBatcher: member " + std::to_string(member) + " submitted a round while one of its rounds waits");
  run_if_all_wait();
  if (!done_.wait_for(lock, timeout_, [&] { return request.done; })) {
    waiting_.erase(member);
    throw std::runtime_error("StepBatcher: member " + std::to_string(member) + "'s local steps did not run within " +
                             std::to_string(timeout_.count() / 1000) + " s: another environment neither stepped nor left");
  }
  if (request.error) std::rethrow_exception(request.error);
  return std::move(request.losses);
}

void StepBatcher::run_if_all_wait() {
  if (waiting_.empty() || static_cast<int>(waiting_.size()) < participants_) return;
  // Every participant waits: their rounds run now, in member order, on this thread (the lock held,
  // though nobody else could proceed anyway).
  std::vector<BatchedReplicaSet::LocalStepsJob> jobs;
  std::vector<Request*> requests;
  for (const auto& [member, request] : waiting_) {
    jobs.push_back({request->replicas, request->train, request->batches});
    requests.push_back(request);
  }
  waiting_.clear();
  try {
    std::vector<std::vector<double>> losses = BatchedReplicaSet::local_steps_together(jobs);
    for (std::size_t j = 0; j < requests.size(); ++j) requests[j]->losses = std::move(losses[j]);
  } catch (...) {
    for (Request* r : requests) r->error = std::current_exception();
  }
  for (Request* r : requests) r->done = true;
  ++merged_rounds_;
  done_.notify_all();
}

}  // namespace env
