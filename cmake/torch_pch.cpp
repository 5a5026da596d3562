// Compiles the shared precompiled header for <torch/torch.h>.
