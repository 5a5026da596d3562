// What env/real/gloo_process_group.cpp must not do, for the test of cmake/GlooHeaders.cmake: build
// c10d's GlooStore here (its inline code and vtable, over Gloo's Store base class as the headers
// declare it) and call a Gloo function. Compiled against Gloo headers other than libtorch's own,
// both would follow the headers' layouts instead of libtorch's: the check must refuse this source.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <chrono>
#include <memory>

std::shared_ptr<gloo::rendezvous::Store> wrap_store(const c10::intrusive_ptr<c10d::Store>& store) {
  return std::make_shared<c10d::ProcessGroupGloo::GlooStore>(store);
}

void shorten_timeout(gloo::Context& context) { context.setTimeout(std::chrono::seconds(1)); }
