// runtime.tf32 stated for each GPU operation, on every PyTorch version (device.cpp).
//
// PyTorch up to 2.8 has one switch per library: Context::setAllowTF32CuDNN (convolutions, RNNs)
// and setFloat32MatmulPrecision (cuBLAS). Newer versions keep those and add a precision per
// backend and operation, at::Float32Precision NONE / IEEE / TF32, where NONE means "as the
// operation's parent says" (cuda/all, then generic/all); the old cuDNN switch, turned off, writes
// NONE. Whether that then means float32 depends on the parents' defaults, which have moved between
// versions (cuDNN's convolutions default to TF32). So where the per-operation API exists, this
// states IEEE or TF32 for convolutions and RNNs outright. The API is found by its signature
// (SFINAE on Context::float32Precision(Float32Backend, Float32Op) const), so this header compiles,
// and does nothing more than the old switches, against a libtorch without it (Debian's 1.13).
#pragma once

#include <utility>

namespace env {
namespace float32_precision {

// The enums of Context::float32Precision(backend, op) const, where it has exactly that signature.
template <class MemberFunction>
struct PrecisionApi {};
template <class Precision, class Context, class Backend, class Op>
struct PrecisionApi<Precision (Context::*)(Backend, Op) const> {
  using precision = Precision;
  using backend = Backend;
  using op = Op;
};

// States TF32 or IEEE for the CUDA backend's convolutions and RNNs; true where the API exists.
template <class Context, class Api = PrecisionApi<decltype(&Context::float32Precision)>>
auto state_cuda_convolutions(Context& context, bool tf32, int)
    -> decltype(context.setFloat32Precision(Api::backend::CUDA, Api::op::CONV, Api::precision::IEEE), bool()) {
  const auto precision = tf32 ? Api::precision::TF32 : Api::precision::IEEE;
  context.setFloat32Precision(Api::backend::CUDA, Api::op::CONV, precision);
  context.setFloat32Precision(Api::backend::CUDA, Api::op::RNN, precision);
  return true;
}

// A libtorch without the per-operation API: its one cuDNN switch already says it all.
template <class Context>
bool state_cuda_convolutions(Context&, bool, long) {
  return false;
}

}  // namespace float32_precision

// Call after Context::setAllowTF32CuDNN(tf32): returns whether the per-operation API was used.
template <class Context>
bool state_cuda_convolution_precision(Context& context, bool tf32) {
  return float32_precision::state_cuda_convolutions(context, tf32, 0);
}

}  // namespace env
