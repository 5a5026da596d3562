#include "env/sim/network.hpp"

namespace env {

double ring_allreduce_ms(int participants, double bytes, const LinkSpec& link) {
  if (participants <= 1) return 0.0;
  const double n = participants;
  return 2.0 * (n - 1.0) * link.alpha_ms + 2.0 * (n - 1.0) / n * bytes / link.bytes_per_ms;
}

}  // namespace env
