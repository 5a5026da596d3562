#include "experiments/analysis/explanation.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "experiments/analysis/comparison.hpp"
#include "experiments/analysis/speedup.hpp"
#include "experiments/analysis/time_shares.hpp"

namespace experiments {
namespace {

std::string format(const char* pattern, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

std::string pct(double share) { return format("%.0f%%", 100.0 * share); }
// As precise as the tables for short times, without their noise for long ones.
std::string seconds(double s) { return format(s < 10 ? "%.2f s" : "%.1f s", s); }
std::string ratio(double r) { return format("%.2fx", r); }

double epoch_time(const ComparisonRow& r) { return r.epochs > 0 ? r.epochs_time_s / static_cast<double>(r.epochs) : INFINITY; }

// The index with the smallest key among those for which it is finite; -1 if none.
template <class Key>
int smallest(std::size_t n, Key key, int skip = -1) {
  int best = -1;
  for (std::size_t i = 0; i < n; ++i) {
    const double k = key(i);
    if (static_cast<int>(i) == skip || !std::isfinite(k)) continue;
    if (best < 0 || k < key(static_cast<std::size_t>(best))) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

Explanation explain_run(const RunResults& run) {
  if (run.policies.empty()) throw std::invalid_argument("explain_run: " + run.name + " has no policy results");
  const std::vector<ComparisonRow> rows = comparison_rows({run});
  const std::size_t n = rows.size();
  std::vector<std::string> kinds;
  std::vector<TimeShares> shares;
  for (const auto& p : run.policies) {
    kinds.push_back(p.policy);
    shares.push_back(time_shares(p));
  }
  const int ref = static_cast<int>(speedup_reference_index(kinds));
  const bool timing_only = rows[0].timing_only;
  const std::string target = format("%.1f%%", 100.0 * rows[0].target_accuracy);
  const auto ttt = [&](std::size_t i) { return rows[i].time_to_target_s ? *rows[i].time_to_target_s : INFINITY; };

  Explanation e;
  int winner = -1;   // the policy the lines are about
  int partner = -1;  // the one it is compared with: the reference, or the runner-up when it wins
  if (timing_only) {
    winner = smallest(n, [&](std::size_t i) { return epoch_time(rows[i]); });
    if (winner < 0) winner = 0;
    const auto& w = rows[static_cast<std::size_t>(winner)];
    e.result = w.label + " has the shortest epochs, " + seconds(epoch_time(w)) + " each";
    partner = winner != ref ? ref : smallest(n, [&](std::size_t i) { return epoch_time(rows[i]); }, winner);
    if (partner >= 0 && std::isfinite(epoch_time(rows[static_cast<std::size_t>(partner)]))) {
      const auto& p = rows[static_cast<std::size_t>(partner)];
      e.result += winner != ref ? ": " + ratio(epoch_time(p) / epoch_time(w)) + " faster than " + p.label + " (" + seconds(epoch_time(p)) + ")."
                                : "; the next, " + p.label + ", takes " + ratio(epoch_time(p) / epoch_time(w)) + " as long.";
    } else {
      e.result += ".";
    }
  } else if (smallest(n, ttt) < 0) {
    winner = smallest(n, [&](std::size_t i) { return std::isfinite(rows[i].final_accuracy) ? -rows[i].final_accuracy : INFINITY; });
    if (winner < 0) winner = 0;
    const auto& w = rows[static_cast<std::size_t>(winner)];
    e.result = "No policy reaches " + target + " within the budget; the most accurate is " + w.label + " (" +
               format("%.1f%%", 100.0 * w.final_accuracy) + ").";
    partner = winner != ref ? ref : -1;
  } else {
    winner = smallest(n, ttt);
    const auto& w = rows[static_cast<std::size_t>(winner)];
    e.result = w.label + " reaches " + target + " first, in " + seconds(ttt(static_cast<std::size_t>(winner)));
    if (winner != ref) {
      partner = ref;
      const auto& r = rows[static_cast<std::size_t>(ref)];
      e.result += r.time_to_target_s ? ": " + ratio(*r.time_to_target_s / *w.time_to_target_s) + " faster than " + r.label + " (" +
                                           seconds(*r.time_to_target_s) + ")."
                                     : "; " + r.label + " does not reach it within the budget.";
    } else {
      partner = smallest(n, ttt, winner);
      if (partner >= 0) {
        const auto& p = rows[static_cast<std::size_t>(partner)];
        e.result += "; the next, " + p.label + ", takes " + ratio(*p.time_to_target_s / *w.time_to_target_s) + " as long.";
      } else {
        e.result += "; no other policy reaches it.";
      }
    }
  }
  if (partner < 0 && n > 1) partner = winner == 0 ? 1 : 0;

  // Why, in the shares of the workers' time, compared as printed (whole percents).
  bool comm_known = true;
  for (const auto& s : shares) comm_known = comm_known && s.comm_known;
  const auto whole = [](double share) { return std::lround(100.0 * share); };
  const auto w = static_cast<std::size_t>(winner);
  const TimeShares& ws = shares[w];
  const bool has_partner = partner >= 0;
  const TimeShares& ps = shares[has_partner ? static_cast<std::size_t>(partner) : w];
  const auto versus = [&](double share, bool first) {
    return has_partner ? " (" + (first ? rows[static_cast<std::size_t>(partner)].label + ": " : std::string()) + pct(share) + ")" : std::string();
  };
  e.why = "Why: " + rows[w].label + "'s workers compute " + pct(ws.compute) + " of the time" + versus(ps.compute, true);
  // Without rounds.csv the communication is not known apart from the rest (profiling, ...).
  e.why += comm_known ? ", are idle " + pct(ws.idle) + versus(ps.idle, false) + " and communicate " + pct(ws.comm) + versus(ps.comm, false)
                      : ", are idle " + pct(ws.idle) + versus(ps.idle, false) + " and spend " + pct(ws.other) + versus(ps.other, false) +
                            " communicating or profiling";
  if (n == 1) return e.why += ".", e;
  // The policy best on each cost, named when it beats the winner there, with its other cost.
  const int least_idle = smallest(n, [&](std::size_t i) { return static_cast<double>(whole(shares[i].idle)); });
  const int least_comm = comm_known ? smallest(n, [&](std::size_t i) { return static_cast<double>(whole(shares[i].comm)); }) : winner;
  const TimeShares& li = shares[static_cast<std::size_t>(least_idle)];
  const TimeShares& lc = shares[static_cast<std::size_t>(least_comm)];
  const bool idle_beaten = whole(li.idle) < whole(ws.idle);
  const bool comm_beaten = comm_known && whole(lc.comm) < whole(ws.comm);
  if (!idle_beaten && !comm_beaten) {
    e.why += comm_known ? "; no policy is less idle or communicates less." : "; no policy is less idle.";
    return e;
  }
  if (idle_beaten && comm_beaten && least_idle == least_comm) {
    e.why += "; " + rows[static_cast<std::size_t>(least_idle)].label + " is less idle (" + pct(li.idle) + ") and communicates less (" +
             pct(li.comm) + ").";
    return e;
  }
  if (idle_beaten) {
    e.why += "; " + rows[static_cast<std::size_t>(least_idle)].label + " is less idle (" + pct(li.idle) + ")";
    if (comm_known) e.why += (whole(li.comm) > whole(ws.comm) ? " but communicates " : " and communicates ") + pct(li.comm);
  }
  if (comm_beaten)
    e.why += "; " + rows[static_cast<std::size_t>(least_comm)].label + " communicates less (" + pct(lc.comm) + ")" +
             (whole(lc.idle) > whole(ws.idle) ? " but is idle " : " and is idle ") + pct(lc.idle);
  e.why += ".";
  return e;
}

std::string explain_seeds(const std::vector<SeedRow>& rows) {
  const SeedRow* best = nullptr;
  for (const auto& r : rows)
    if (r.seeds > 0 && r.reached == r.seeds && (!best || r.time_to_target_s.mean < best->time_to_target_s.mean)) best = &r;
  if (rows.empty()) return "";
  const std::string target = format("%.1f%%", 100.0 * rows.front().target_accuracy);
  if (!best) return "No policy reaches " + target + " in every seed.";
  std::string s = "Over " + std::to_string(best->seeds) + " seeds, " + best->label + " reaches " + target +
                  " soonest on average: " + seconds(best->time_to_target_s.mean);
  if (std::isfinite(best->time_to_target_s.ci95)) s += " ± " + seconds(best->time_to_target_s.ci95) + " (95% CI)";
  if (best->label != best->reference && std::isfinite(best->speedup.mean))
    s += ", a paired speedup of " + format("%.2fx", best->speedup.mean) + " over " + best->reference;
  return s + ".";
}

}  // namespace experiments
