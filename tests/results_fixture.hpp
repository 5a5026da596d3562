// A small results directory written by hand, shaped like `orchestra run`'s output
// (experiments/results/results_files.cpp), for the compare and plot tests. Values are chosen so that the
// table's numbers can be worked out by hand:
//   dsgd:    time to target 100 s, idle per worker [10, 20] s  -> speedup 1.00x, idle 15.00
//   lbb:     time to target  50 s, idle per worker [5, 15] s   -> speedup 2.00x, idle 10.00
//   fixed-t: target not reached (null), barrier T = 120 ms then 150 ms, tau = 4/2 then 5/2
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "test_helpers.hpp"

namespace testing {

inline void write_policy(const std::string& dir, const std::string& label, const std::string& ttt,
                         const std::string& idle, const std::string& rounds_csv) {
  std::filesystem::create_directories(dir + "/" + label);
  const std::string d = dir + "/" + label + "/";
  write_text(d + "summary.json", R"({"policy": ")" + label + R"(", "label": ")" + label +
                                     R"(", "target_accuracy": 0.8, "reached_target": true, "time_to_target_s": )" + ttt +
                                     R"(, "final_accuracy": 0.8125, "final_loss": 0.5, "epochs": 2, "rounds": 4,
     "sim_time_s": 150.5, "mean_straggler_effect": 0.25, "mean_utilization": 0.75, "idle_s_per_worker": )" + idle +
                                     R"(, "speedup_reference": "dsgd", "speedup_vs_first": null})");
  write_text(d + "epochs.csv",
             "epoch,sim_time_s,epoch_time_s,accuracy,loss,train_loss,straggler_effect,utilization,rounds\n"
             "1,75,75,0.7,0.8,0.9,0.3,0.7,2\n2,150.5,75.5,0.8125,0.5,0.6,0.2,0.8,2\n");
  write_text(d + "evals.csv", "round,epoch,sim_time_s,accuracy,loss\n2,1,75,0.7,0.8\n4,2,150.5,0.8125,0.5\n");
  write_text(d + "rounds.csv", rounds_csv);
}

inline std::string rounds_without_barrier() {
  return "round,epoch,worker,batch_size,local_steps,compute_ms,idle_ms,comm_ms,round_ms,clock_ms,straggler_effect,barrier_ms\n"
         "1,0,fast,96,1,40,20,5,65,65,0.4,0\n1,0,slow,32,1,60,0,5,65,65,0.4,0\n"
         "2,0,fast,90,1,45,10,5,60,125,0.2,0\n2,0,slow,38,1,55,0,5,60,125,0.2,0\n"
         "3,1,fast,88,1,47,6,5,58,183,0.1,0\n3,1,slow,40,1,53,0,5,58,183,0.1,0\n"
         "4,1,fast,88,1,48,4,5,57,240,0.05,0\n4,1,slow,40,1,52,0,5,57,240,0.05,0\n";
}

inline std::string rounds_with_barrier() {
  return "round,epoch,worker,batch_size,local_steps,compute_ms,idle_ms,comm_ms,round_ms,clock_ms,straggler_effect,barrier_ms\n"
         "1,0,fast,64,4,118,2,5,125,125,0.02,120\n1,0,slow,64,2,120,0,5,125,125,0.02,120\n"
         "2,0,fast,64,4,119,1,5,125,250,0.01,120\n2,0,slow,64,2,120,0,5,125,250,0.01,120\n"
         "3,1,fast,64,5,148,2,5,155,405,0.01,150\n3,1,slow,64,2,150,0,5,155,405,0.01,150\n"
         "4,1,fast,64,5,149,1,5,155,560,0.01,150\n4,1,slow,64,2,150,0,5,155,560,0.01,150\n";
}

// dsgd, lbb and fixed-t in `dir` (created), written in that order.
inline void write_results(const std::string& dir) {
  write_policy(dir, "dsgd", "100", "[10, 20]", rounds_without_barrier());
  write_policy(dir, "lbb", "50", "[5, 15]", rounds_without_barrier());
  write_policy(dir, "fixed-t", "null", "[1, 3]", rounds_with_barrier());
  // The run order is the order the folders were completed in (epochs.csv's time); set it, as a fast disk may give
  // all three the same time stamp.
  const auto now = std::filesystem::file_time_type::clock::now();
  std::filesystem::last_write_time(dir + "/dsgd/epochs.csv", now - std::chrono::seconds(30));
  std::filesystem::last_write_time(dir + "/lbb/epochs.csv", now - std::chrono::seconds(20));
  std::filesystem::last_write_time(dir + "/fixed-t/epochs.csv", now - std::chrono::seconds(10));
}

}  // namespace testing
