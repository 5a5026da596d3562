// The hook through which a learned controller (the A3C agent of Orchestra Sec. 3.1.3) moves the
// barrier: the BarrierController asks it for an action at the start of every epoch, with the state
// of orchestra/rl_state.hpp. Implementations live elsewhere (agents/); this keeps orchestra_ctl free
// of libtorch.
#pragma once

#include <vector>

namespace orchestra {

class BarrierAgent {
 public:
  virtual ~BarrierAgent() = default;
  // One of -1, 0, +1: decrease, keep or increase T by one unit (3.1.3, "Action Space"). The
  // observation has StateLayout::kStateSize entries.
  virtual int act(const std::vector<float>& observation) = 0;
  // A run begins (BarrierController::start): an agent with a random stream starts it over, so that
  // a controller started twice (a preflight, then the run) acts the same in the run.
  virtual void start() {}
};

}  // namespace orchestra
