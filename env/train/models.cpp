#include "env/train/models.hpp"

#include <cstdio>
#include <stdexcept>

#include "env/train/stacked_mlp.hpp"
#include "env/train/stacked_models.hpp"

namespace env {
namespace {

class Mlp : public Classifier {
 public:
  Mlp(std::int64_t inputs, const std::vector<int>& hidden, int classes) {
    std::int64_t width = inputs;
    for (std::size_t i = 0; i < hidden.size(); ++i) {
      layers_.push_back(register_module("fc" + std::to_string(i), torch::nn::Linear(width, hidden[i])));
      width = hidden[i];
    }
    out_ = register_module("out", torch::nn::Linear(width, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = x.flatten(1);
    for (auto& layer : layers_) x = torch::relu(layer->forward(x));
    return out_->forward(x);
  }

 private:
  std::vector<torch::nn::Linear> layers_;
  torch::nn::Linear out_{nullptr};
};

// LeNet-5 shaped: two 5x5 convolutions with max pooling, then three fully connected layers.
class LeNet : public Classifier {
 public:
  LeNet(std::int64_t channels, std::int64_t side, int classes)
      : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, 6, 5).padding(2)))),
        conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, 5)))) {
    const std::int64_t after = ((side / 2) - 4) / 2;  // pad-2 conv keeps side, pool halves, conv5 -4, pool
    if (after < 1) throw std::invalid_argument("cnn needs inputs of at least 12x12 pixels");
    fc1_ = register_module("fc1", torch::nn::Linear(16 * after * after, 120));
    fc2_ = register_module("fc2", torch::nn::Linear(120, 84));
    fc3_ = register_module("fc3", torch::nn::Linear(84, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);
    x = torch::relu(fc1_->forward(x.flatten(1)));
    x = torch::relu(fc2_->forward(x));
    return fc3_->forward(x);
  }

 private:
  torch::nn::Conv2d conv1_, conv2_;
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
};

// The basic block of He et al.'s CIFAR ResNets, with a 1x1 projection when the shape changes.
class BasicBlock : public torch::nn::Module {
 public:
  BasicBlock(std::int64_t in, std::int64_t out, std::int64_t stride)
      : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(out))),
        conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(out, out, 3).padding(1).bias(false)))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut_ = register_module("shortcut", torch::nn::Sequential(
          torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)), torch::nn::BatchNorm2d(out)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    auto y = torch::relu(bn1_->forward(conv1_->forward(x)));
    y = bn2_->forward(conv2_->forward(y));
    return torch::relu(y + (shortcut_ ? shortcut_->forward(x) : x));
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Sequential shortcut_{nullptr};
};

class ResNet : public Classifier {
 public:
  ResNet(std::int64_t channels, int blocks, int width, int classes)
      : stem_(register_module("stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, width, 3).padding(1).bias(false)))),
        bn_(register_module("bn", torch::nn::BatchNorm2d(width))) {
    std::int64_t in = width;
    for (int stage = 0; stage < 3; ++stage) {
      const std::int64_t out = width << stage;
      for (int b = 0; b < blocks; ++b) {
        auto block = std::make_shared<BasicBlock>(in, out, (stage > 0 && b == 0) ? 2 : 1);
        blocks_.push_back(register_module("block" + std::to_string(stage) + "_" + std::to_string(b), block));
        in = out;
      }
    }
    fc_ = register_module("fc", torch::nn::Linear(in, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn_->forward(stem_->forward(x)));
    for (auto& block : blocks_) x = block->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_->forward(x);
  }

 private:
  torch::nn::Conv2d stem_;
  torch::nn::BatchNorm2d bn_;
  std::vector<std::shared_ptr<BasicBlock>> blocks_;
  torch::nn::Linear fc_{nullptr};
};

std::shared_ptr<Classifier> make_mlp(const ModelSpec& spec, const std::vector<std::int64_t>& shape, int classes) {
  return std::make_shared<Mlp>(shape[0] * shape[1] * shape[2], spec.hidden, classes);
}
std::shared_ptr<Classifier> make_lenet(const ModelSpec&, const std::vector<std::int64_t>& shape, int classes) {
  return std::make_shared<LeNet>(shape[0], shape[1], classes);
}
std::shared_ptr<Classifier> make_resnet(const ModelSpec& spec, const std::vector<std::int64_t>& shape, int classes) {
  return std::make_shared<ResNet>(shape[0], spec.resnet_blocks, spec.resnet_width, classes);
}

}  // namespace

const std::vector<ModelKind>& model_registry() {
  static const std::vector<ModelKind> table = {
      {"mlp", "fully connected layers of widths model.hidden with ReLU between them", make_mlp, stacked_mlp_forward,
       stacked_mlp_gradients, true},
      {"cnn", "LeNet-like: two 5x5 convolutions with 2x2 max pooling, then three linear layers (inputs of at least 12x12)", make_lenet,
       stacked_cnn_forward, nullptr, false},
      {"resnet", "CIFAR ResNet-(6n+2): n = model.resnet_blocks per stage, model.resnet_width channels first, batch norm", make_resnet,
       nullptr, nullptr, false},
  };
  return table;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : model_registry()) names.emplace_back(m.name);
  return names;
}

const ModelKind& model_kind(const std::string& arch) {
  for (const auto& m : model_registry())
    if (arch == m.name) return m;
  throw std::invalid_argument("no model named '" + arch + "' in the model table");
}

std::string model_help() {
  std::string text;
  for (const auto& m : model_registry()) {
    char line[320];
    std::snprintf(line, sizeof line, "  %-15s %s\n", m.name, m.summary);
    text += line;
  }
  return text;
}

std::shared_ptr<Classifier> make_model(const ModelSpec& spec, const std::vector<std::int64_t>& shape, int classes) {
  if (shape.size() != 3) throw std::invalid_argument("models take [C, H, W] inputs");
  return model_kind(spec.arch).make(spec, shape, classes);
}

double parameter_bytes(Classifier& model) {
  double bytes = 0;
  for (const auto& p : model.parameters()) bytes += static_cast<double>(p.numel()) * 4.0;
  return bytes;
}

}  // namespace env
