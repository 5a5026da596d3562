// Several environments' local SGD steps as one stacked computation on one device: vectorized real
// environments. One GPU idles on one small environment (issue 40: the A3C environment's 4 workers
// ran at 0.67x the CPU, while 256 workers stacked ran at 31x); K episodes of the barrier-tuning
// environment, each in its own thread, submit their local-SGD rounds here, and whenever every
// participating thread is waiting, the rounds run together (BatchedReplicaSet::local_steps_together:
// slot by slot, all stepping replicas of all episodes in one forward and backward). Everything
// else an environment does (its clock, its averaging, its evaluation) stays its own.
//
// Determinism: a merge holds the next round of every participant, ordered by member index, never
// by arrival; so the same participants with the same seeds give the same results, whatever the
// threads' timing. (A participant's results depend on who it was merged with, as a wider batched
// product sums in another order: within floating-point reassociation of stepping alone.)
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "env/train/batched_replicas.hpp"

namespace env {

class StepBatcher {
 public:
  // Every wait for the other participants is bounded by `timeout` (std::runtime_error after it):
  // they are threads of this process that never wait for anything else, so it only fires on a bug.
  explicit StepBatcher(std::chrono::milliseconds timeout = std::chrono::minutes(10)) : timeout_(timeout) {}

  // A thread takes part, as member `member` (distinct among those taking part at once), while this
  // lives; its leaving lets the others' merged rounds go on without it.
  class Participation {
   public:
    Participation(StepBatcher& batcher, int member);
    ~Participation();
    Participation(const Participation&) = delete;
    Participation& operator=(const Participation&) = delete;

   private:
    StepBatcher& batcher_;
    int member_;
  };

  // `replicas.local_steps(train, batches)`, run together with every other participant's next
  // round; blocks until it has run. A participant that calls no local_steps (evaluating,
  // averaging, at the end of its step) holds the others back until it calls or leaves.
  std::vector<double> local_steps(int member, BatchedReplicaSet& replicas, const Dataset& train,
                                  const std::vector<std::vector<IndexSpan>>& batches);

  std::int64_t merged_rounds() const;  // rounds run so far, each holding one or more participants' rounds

 private:
  struct Request {
    BatchedReplicaSet* replicas = nullptr;
    const Dataset* train = nullptr;
    const std::vector<std::vector<IndexSpan>>* batches = nullptr;
    std::vector<double> losses;
    std::exception_ptr error;
    bool done = false;
  };
  void join(int member);
  void leave(int member);
  // Runs every waiting request as one merge, when all participants wait; the lock is held.
  void run_if_all_wait();

  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::map<int, Request*> waiting_;  // by member: the merge order
  std::set<int> members_;            // taking part now
  int participants_ = 0;
  std::int64_t merged_rounds_ = 0;
};

}  // namespace env
