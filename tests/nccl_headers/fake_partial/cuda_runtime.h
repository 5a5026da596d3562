// A stand-in for the CUDA runtime's header as CUDA 13's pip package ships it: it includes a file
// that package does not hold (crt/ comes with nvcc).
#pragma once
#include "crt/host_config.h"
