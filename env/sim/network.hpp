// The alpha-beta network model and the ring all-reduce cost (docs/ARCHITECTURE.md "Real runs").
#pragma once

namespace env {

struct LinkSpec {
  double alpha_ms = 0.05;          // per-message latency
  double bytes_per_ms = 125000.0;  // bandwidth (125,000 B/ms = 1 Gbit/s)
};

struct NetworkSpec {
  LinkSpec inter_server;  // between servers (Orchestra's testbed: gigabit Ethernet)
  LinkSpec intra_server{0.005, 10.0e6};  // inside a server (PCIe-class, 10 GB/s)
  double message_bytes = 0;  // bytes of one model/gradient message; 0 = the trained model's size
};

// Ring all-reduce of `bytes` over `participants` ranks: 2(N-1) latency terms and
// 2(N-1)/N of the message over the link (reduce-scatter then all-gather).
double ring_allreduce_ms(int participants, double bytes, const LinkSpec& link);

}  // namespace env
