#include "agents/acting_network.hpp"

#include "agents/network_shape.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace agents {
namespace {

constexpr std::size_t kBlockRows = 32;  // rows taken through every layer together (their activations stay in L1)

// Four floats as one value (GCC's and Clang's generic vectors: an SSE register on x86-64, a NEON
// one on arm64).
using Float4 = float __attribute__((vector_size(16)));

inline Float4 load4(const float* p) {
  Float4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, Float4 v) { std::memcpy(p, &v, sizeof v); }

// y[r][o] = bias[o] + sum_i x[r][i] w_t[i][o] for R rows (x: row stride `in`, y: row stride
// `out`). 16 outputs at a time are held in registers for all R rows while the inputs stream by,
// so that each weight is loaded once per R rows: a register tile, as a GEMM kernel has.
template <int R>
inline void affine_rows(const float* x, int in, int out, const float* w_t, const float* bias, float* y) {
  int o = 0;
  for (; o + 16 <= out; o += 16) {
    Float4 acc[R][4];
    for (int k = 0; k < 4; ++k) {
      const Float4 b = load4(bias + o + 4 * k);
      for (int r = 0; r < R; ++r) acc[r][k] = b;
    }
    for (int i = 0; i < in; ++i) {
      const float* w = w_t + static_cast<std::size_t>(i) * static_cast<std::size_t>(out) + o;
      const Float4 w0 = load4(w), w1 = load4(w + 4), w2 = load4(w + 8), w3 = load4(w + 12);
      for (int r = 0; r < R; ++r) {
        const float xi = x[static_cast<std::size_t>(r) * static_cast<std::size_t>(in) + static_cast<std::size_t>(i)];
        acc[r][0] += xi * w0;
        acc[r][1] += xi * w1;
        acc[r][2] += xi * w2;
        acc[r][3] += xi * w3;
      }
    }
    for (int r = 0; r < R; ++r)
      for (int k = 0; k < 4; ++k) store4(y + static_cast<std::size_t>(r) * static_cast<std::size_t>(out) + o + 4 * k, acc[r][k]);
  }
  for (; o < out; ++o)  // the outputs past the last 16 (the head's 4, odd widths)
    for (int r = 0; r < R; ++r) {
      const float* xr = x + static_cast<std::size_t>(r) * static_cast<std::size_t>(in);
      float acc = bias[o];
      for (int i = 0; i < in; ++i) acc += xr[i] * w_t[static_cast<std::size_t>(i) * static_cast<std::size_t>(out) + static_cast<std::size_t>(o)];
      y[static_cast<std::size_t>(r) * static_cast<std::size_t>(out) + static_cast<std::size_t>(o)] = acc;
    }
}

// The same for any number of rows: tiles of 2 (two rows x 16 outputs fill 8 of the 16 vector
// registers, leaving the weights and inputs theirs), then the odd one.
inline void affine(const float* x, std::size_t rows, int in, int out, const float* w_t, const float* bias, float* y) {
  std::size_t r = 0;
  for (; r + 2 <= rows; r += 2)
    affine_rows<2>(x + r * static_cast<std::size_t>(in), in, out, w_t, bias, y + r * static_cast<std::size_t>(out));
  if (r < rows) affine_rows<1>(x + r * static_cast<std::size_t>(in), in, out, w_t, bias, y + r * static_cast<std::size_t>(out));
}

// tanh as a rational function (the [13/6] minimax fit Eigen uses for float, its
// generic_fast_tanh_float), clamped where tanh rounds to +-1 in float: within 4e-7 of tanh on the
// whole line, and free of the branches and calls of std::tanh, so a layer's outputs are
// transformed with vector instructions; glibc's tanhf per element cost more than the layer's
// arithmetic.
inline float rational_tanh(float a) {
  constexpr float kClamp = 7.99881172180175781f;
  const float x = std::max(-kClamp, std::min(kClamp, a));
  const float x2 = x * x;
  float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = x2 * p + -8.60467152213735e-11f;
  p = x2 * p + 5.12229709037114e-08f;
  p = x2 * p + 1.48572235717979e-05f;
  p = x2 * p + 6.37261928875436e-04f;
  p = x2 * p + 4.89352455891786e-03f;
  float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = x2 * q + 2.26843463243900e-03f;
  q = x2 * q + 4.89352518554385e-03f;
  return x * p / q;
}

struct LayerView {
  int in = 0, out = 0;
  const float* w_t = nullptr;
  const float* bias = nullptr;
};

// `count` rows through the trunk (tanh after each layer) and the head: the head's outputs (3
// logits, V) land in `head_out`, row after row; a and b hold count x widest floats each.
void block_forward(const float* x, std::size_t count, const LayerView* trunk, std::size_t layers, LayerView head, float* a, float* b,
                   float* head_out) {
  for (std::size_t l = 0; l < layers; ++l) {
    affine(x, count, trunk[l].in, trunk[l].out, trunk[l].w_t, trunk[l].bias, b);
    const std::size_t values = count * static_cast<std::size_t>(trunk[l].out);
    for (std::size_t i = 0; i < values; ++i) b[i] = rational_tanh(b[i]);
    std::swap(a, b);
    x = a;
  }
  affine(x, count, head.in, head.out, head.w_t, head.bias, head_out);
}

}  // namespace

ActingNetwork::ActingNetwork(const ActorCriticSpec& spec) : spec_(spec) {
  if (spec_.observation_size < 1 || spec_.hidden.empty())
    throw std::invalid_argument("acting network: needs an observation size >= 1 and at least one hidden layer");
  if (spec_.actions < 2) throw std::invalid_argument("acting network: needs at least two actions, got " + std::to_string(spec_.actions));
  int in = spec_.observation_size;
  for (int width : spec_.hidden) {
    if (width < 1) throw std::invalid_argument("acting network: hidden widths must be >= 1, got " + std::to_string(width));
    trunk_.push_back(Layer{in, width, std::vector<float>(static_cast<std::size_t>(in) * width), std::vector<float>(static_cast<std::size_t>(width))});
    parameter_count_ += static_cast<std::size_t>(in) * width + width;
    in = width;
  }
  const int head_outputs = spec_.actions + 1;  // the logits, then V
  head_ = Layer{in, head_outputs, std::vector<float>(static_cast<std::size_t>(in) * head_outputs), std::vector<float>(static_cast<std::size_t>(head_outputs))};
  parameter_count_ += static_cast<std::size_t>(in) * head_outputs + head_outputs;
}

void ActingNetwork::load(ActorCritic& net) {
  if (!same_shape(net->spec(), spec_))
    throw std::invalid_argument("acting network: the network is not of this spec");
  load(flat_parameters(net));
}

void ActingNetwork::load(const std::vector<float>& flat) {
  if (flat.size() != parameter_count_)
    throw std::invalid_argument("acting network: expected " + std::to_string(parameter_count_) + " parameters, got " +
                                std::to_string(flat.size()));
  // Parameter order (actor_critic.hpp): each trunk Linear's weight [out x in] then bias, then
  // policy.weight [actions x h], policy.bias, value.weight [1 x h], value.bias.
  std::size_t at = 0;
  const auto take_transposed = [&](Layer& layer, int first_output, int outputs) {
    for (int o = 0; o < outputs; ++o)
      for (int i = 0; i < layer.in; ++i)
        layer.weight_t[static_cast<std::size_t>(i) * layer.out + first_output + o] = flat[at++];
    for (int o = 0; o < outputs; ++o) layer.bias[static_cast<std::size_t>(first_output + o)] = flat[at++];
  };
  for (Layer& layer : trunk_) take_transposed(layer, 0, layer.out);
  take_transposed(head_, 0, spec_.actions);
  take_transposed(head_, spec_.actions, 1);
}

void ActingNetwork::forward(const float* observations, int rows, ActingOutput& out) const {
  if (rows < 0) throw std::invalid_argument("acting network: negative row count");
  const auto n = static_cast<std::size_t>(rows);
  const auto actions = static_cast<std::size_t>(spec_.actions), head_outputs = actions + 1;
  out.probabilities.resize(n * actions);
  out.values.resize(n);
  int widest = spec_.observation_size;
  std::vector<LayerView> trunk;
  for (const Layer& l : trunk_) {
    widest = std::max(widest, l.out);
    trunk.push_back(LayerView{l.in, l.out, l.weight_t.data(), l.bias.data()});
  }
  std::vector<float> a(kBlockRows * static_cast<std::size_t>(widest)), b(a.size()), head(kBlockRows * head_outputs);
  std::vector<double> e(actions);
  for (std::size_t first = 0; first < n; first += kBlockRows) {
    const std::size_t count = std::min(kBlockRows, n - first);
    block_forward(observations + first * static_cast<std::size_t>(spec_.observation_size), count, trunk.data(), trunk.size(),
                  LayerView{head_.in, head_.out, head_.weight_t.data(), head_.bias.data()}, a.data(), b.data(), head.data());
    for (std::size_t r = 0; r < count; ++r) {
      const float* h = head.data() + r * head_outputs;
      // Softmax of the logits, shifted by their maximum (as torch's) so that exp never overflows.
      const double top = *std::max_element(h, h + actions);
      double sum = 0;
      for (std::size_t k = 0; k < actions; ++k) sum += e[k] = std::exp(static_cast<double>(h[k]) - top);
      double* p = out.probabilities.data() + (first + r) * actions;
      for (std::size_t k = 0; k < actions; ++k) p[k] = e[k] / sum;
      out.values[first + r] = h[actions];
    }
  }
}

}  // namespace agents
