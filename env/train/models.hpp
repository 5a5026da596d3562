// The classifiers the environment trains: an MLP, a LeNet-like CNN, and a small ResNet for
// CIFAR-shaped input; the table of them (model_registry()).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace env {

struct ModelSpec {
  std::string arch = "mlp";           // a name in the model table (model_registry()), checked when read
  std::vector<int> hidden{256, 128};  // MLP hidden layer widths
  int resnet_blocks = 1;              // residual blocks per stage (3 stages): ResNet-(6n+2)
  int resnet_width = 16;              // channels of the first stage
};

class Classifier : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

struct StackedGradients;  // stacked_mlp.hpp

// One row per model: the table (models.cpp, beside the models) from which `model.arch:`'s
// spellings, `--help`, the README's list (checked by a test) and make_model all come. To add a
// model: its class and one row in models.cpp, and its name in the README's config reference; a
// model that stacks (runtime.replicas: batched) also gives its stacked forward (stacked_models.hpp).
struct ModelKind {
  const char* name;     // `model.arch:` in configs, `--model` of orchestra profile
  const char* summary;  // one line for --help and the README
  // A freshly initialized model for inputs [C, H, W] and `classes` outputs.
  std::shared_ptr<Classifier> (*make)(const ModelSpec& spec, const std::vector<std::int64_t>& input_shape, int classes);
  // Logits [n, B, classes] of n replicas from their stacked parameters (stacked_models.hpp); null
  // for a model that does not stack (batch norm), whose replicas then train one after another.
  torch::Tensor (*stacked_forward)(const std::vector<torch::Tensor>& params, const torch::Tensor& x);
  // The stacked gradients written out by hand (stacked_mlp.hpp); null: autograd through stacked_forward.
  StackedGradients (*stacked_gradients)(const std::vector<torch::Tensor>& params, const torch::Tensor& x, const torch::Tensor& targets,
                                        const torch::Tensor& sample_weights);
  // runtime.replicas: auto batches it on the CPU as well as on a GPU (where each was measured faster;
  // BENCHMARKS.md): the MLP yes, the CNN no (Debian's grouped convolution is slower than N plain ones).
  bool batch_on_cpu;
};

// Every model, in the order --help and the README list them.
const std::vector<ModelKind>& model_registry();
std::vector<std::string> model_names();
// The row of `arch`; throws std::invalid_argument for a name not in the table (a caller's bug:
// configs are checked when read).
const ModelKind& model_kind(const std::string& arch);
// "  name           summary" lines, one per model, for --help.
std::string model_help();

// Builds a freshly initialized model for inputs of shape [C, H, W] and `classes` outputs. The
// initialization draws from libtorch's default generator, which the caller seeds.
std::shared_ptr<Classifier> make_model(const ModelSpec& spec, const std::vector<std::int64_t>& input_shape, int classes);

// Total bytes of the model's parameters (float32), the size of one all-reduce message.
double parameter_bytes(Classifier& model);

}  // namespace env
