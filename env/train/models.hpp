// The classifiers the environment trains: an MLP, a LeNet-like CNN, and a small ResNet for
// CIFAR-shaped input.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace env {

enum class ModelKind { Mlp, Cnn, ResNet };

// The `arch:` spellings (config and command line).
inline const std::vector<std::pair<const char*, ModelKind>>& model_spellings() {
  static const std::vector<std::pair<const char*, ModelKind>> spellings = {
      {"mlp", ModelKind::Mlp}, {"cnn", ModelKind::Cnn}, {"resnet", ModelKind::ResNet}};
  return spellings;
}

struct ModelSpec {
  ModelKind kind = ModelKind::Mlp;
  std::vector<int> hidden{256, 128};  // MLP hidden layer widths
  int resnet_blocks = 1;              // residual blocks per stage (3 stages): ResNet-(6n+2)
  int resnet_width = 16;              // channels of the first stage
};

class Classifier : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

// Builds a freshly initialized model for inputs of shape [C, H, W] and `classes` outputs. The
// initialization draws from libtorch's default generator, which the caller seeds.
std::shared_ptr<Classifier> make_model(const ModelSpec& spec, const std::vector<std::int64_t>& input_shape, int classes);

const char* model_name(ModelKind kind);

// Total bytes of the model's parameters (float32), the size of one all-reduce message.
double parameter_bytes(Classifier& model);

}  // namespace env
