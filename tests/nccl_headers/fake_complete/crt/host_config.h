// A stand-in for the toolkit's crt/host_config.h: with it, the stand-in cuda_runtime.h compiles.
#pragma once
