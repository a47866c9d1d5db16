// The kernel families KernelRegistry.cpp collects; each is defined in its own file.
#pragma once

#include "wsv/runner/KernelRegistry.h"

#include <vector>

namespace wsv {
namespace runner {

std::vector<KernelSpec> hopperKernelSpecs(); // HopperKernels.cpp: h1-h6, sm_90a
std::vector<KernelSpec> blackwellKernelSpecs(); // BlackwellKernels.cpp: b1-b6, sm_100a

} // namespace runner
} // namespace wsv
