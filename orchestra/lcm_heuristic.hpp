// Orchestra's Load Balance Controller (Sec. 3.1.1): the "least common multiple" heuristic that picks
// a barrier T so that every worker's tau_n = floor(T / t_b^n) local steps end as close to T as the
// spread constraint M allows.
//
// The paper's steps, as this toolkit reads them (docs/ARCHITECTURE.md "Reading the papers"):
//   (1) T = max_n t_b^n, the slowest worker's batch time;
//   (2) idle time at T: t_W = max_n mod(T, t_b^n) = max_n (T - tau_n t_b^n);
//   (3) raise T and repeat while max_n tau_n - min_n tau_n <= M;
//   T* is the candidate with the smallest t_W (ties: the smaller T).
//
// Which T are "candidates" (the paper only says "let T increase"): the multiples k * t_b^n of every
// worker's batch time, in increasing order. Between two consecutive multiples no tau_n changes, so
// every mod(T, t_b^n) grows with slope 1 and t_W grows too: the smallest t_W of each stretch is at
// its left end, a multiple. The multiples are therefore exactly the T the continuous search could
// pick, whatever the units of t_b (a fixed 1 ms step would miss 2.1 ms, 4.2 ms, ... and look at
// points that can never win). The spread max tau - min tau also changes only at multiples, so the
// stopping rule of step (3) fires at the same T as a fine-grained scan would.
//
// At a multiple T = k t_b^j, worker j ends exactly at T, so t_W = T - min_n tau_n t_b^n is also the
// idle time the environment measures (a round ends when its slowest worker ends; idle = round
// compute max - own compute): the paper's barrier slack and the toolkit's idle agree.
//
// Cost: the multiples are merged from N arithmetic sequences with a heap; each candidate costs
// O(log N). The search stops when the spread passes M, so the fastest worker's tau stays within
// about M / (1 - t_min/t_max) steps and the number of candidates is O(M N) for a bounded speed
// ratio: O(M N log N) in all, the paper's O(M N) up to the heap.
#pragma once

#include <cstdint>
#include <vector>

namespace orchestra {

// What T* minimizes among the candidates.
//
// Idle is 3.1.1 read literally: the smallest t_W = max_n mod(T, t_b^n), in ms. Measured batch times
// are never exact multiples of each other, so the residues grow with T and the smallest t_W
// almost always sits at the first candidates: tau = 2 on the fast workers, 1 on the slow ones,
// one average per slowest step. That is DSGD's communication rate, which 3.1.3 itself names as the
// failure of the load balancer alone ("if the number of local updates of each worker is too small,
// then each epoch would take a lot of time to communicate ... Orchestra will degrade to DSGD") and
// leaves to the learned barrier controller.
//
// Utilization takes the goal 3.1.1 states ("keep the computation state as much as possible instead
// of the idle state ... improve cluster utilization") with the all-reduce that closes every round
// counted as the non-computing time it is: a round at candidate T lasts T + C (some worker ends
// exactly at T), and the least busy worker computes for T - t_W of it, so T* minimizes
//   (t_W + C) / (T + C),
// the share of a round that the least busy worker does not compute. With C = 0 this is t_W / T,
// idle relative to the barrier, so a few ms of idle weigh the same at any T; with communication,
// larger T amortizes it, up to the spread bound M (the staleness the paper accepts) or the step
// cap. Ties go to the smaller T in both.
enum class LcmObjective { Idle, Utilization };

struct LcmOptions {
  // M of step (3): the largest allowed max_n tau_n - min_n tau_n (>= 0).
  int max_step_spread = 8;
  // Safety cap on the fastest worker's tau_n: when the batch times are almost equal the spread
  // grows so slowly that M alone would let the search run for ~t/|t_1 - t_2| candidates. 64 local
  // steps between averages is already far past what local-SGD studies use.
  int max_local_steps = 64;
  LcmObjective objective = LcmObjective::Idle;
  // C: the all-reduce time that closes every round, in ms (>= 0); used by Utilization only.
  double comm_ms = 0;
};

struct LcmResult {
  double barrier_ms = 0;            // T*
  std::vector<int> local_steps;     // tau_n = floor(T* / t_b^n), never below 1 since T* >= max t_b
  std::vector<double> idle_ms;      // T* - tau_n t_b^n, per worker
  double max_idle_ms = 0;           // t_W at T* (the minimum over the candidates for Idle)
  double round_waste = 0;           // (t_W + C) / (T* + C), the minimum for Utilization
  int step_spread = 0;              // max tau - min tau at T*
  // False when even the first candidate T = max t_b breaks M or the step cap (one worker is more
  // than M+1 times faster than another): T* is then max t_b, the smallest T at which the slowest
  // worker still takes a step, and the caller decides what to do with the spread.
  bool constraints_met = true;
  std::int64_t candidates = 0;      // candidates examined (the O(M N) of 3.1.1)
};

// Runs the heuristic on per-worker batch times in ms (finite, > 0). Throws std::invalid_argument
// on an empty list, a non-positive or non-finite time, or negative (or non-finite) options.
LcmResult lcm_barrier(const std::vector<double>& batch_ms, const LcmOptions& options = {});

// floor(T / t) with a relative tolerance of 1e-9, so that T = k t computed in floating point
// (0.1 * 3 = 0.30000000000000004) counts k steps. Shared by the heuristic and the controller so
// both always agree on tau.
int steps_within(double barrier_ms, double batch_ms);

}  // namespace orchestra
