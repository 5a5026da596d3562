#include "common/interrupt.hpp"

#include <signal.h>

#include <atomic>
#include <csignal>
#include <stdexcept>

namespace common {
namespace {

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_run_stop{false};
bool g_installed = false;
struct sigaction g_previous_int, g_previous_term;

void remember(int signal) { g_signal = signal; }

}  // namespace

InterruptRequest::InterruptRequest() {
  if (g_installed) throw std::logic_error("InterruptRequest: one at a time");
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = remember;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: the handler runs once, so a second Ctrl-C kills as usual. SA_RESTART: a read
  // or poll under way is resumed; the work sees the flag at its next poll.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
  g_installed = true;
}

InterruptRequest::~InterruptRequest() {
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  g_installed = false;
}

int InterruptRequest::signal() const { return g_signal; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

void request_run_stop() { g_run_stop.store(true); }
void clear_run_stop() { g_run_stop.store(false); }
bool run_stop_requested() { return g_run_stop.load(std::memory_order_relaxed); }

}  // namespace common
