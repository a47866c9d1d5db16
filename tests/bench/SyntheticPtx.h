//===- SyntheticPtx.h - a large PTX file made of real kernels ----------------------===//
//
// The benchmark's large input: a template PTX file (a reference kernel) written once, then
// its `.entry` functions again and again, each copy renamed (`h5_bf16` -> `h5_bf16_s7`), until
// the file reaches the size asked for. Every copy is the compiler's own text, so the file is
// valid PTX that ptxas accepts, with the statement mix of real kernels.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace wsv {
namespace bench {

struct SyntheticPtx {
  uint64_t Bytes = 0;
  unsigned Entries = 0; ///< entry functions in the written file, the template's included
};

/// Writes OutPath from TemplatePath, at least MinBytes long.
llvm::Expected<SyntheticPtx> writeSyntheticPtx(llvm::StringRef TemplatePath,
                                               llvm::StringRef OutPath, uint64_t MinBytes);

} // namespace bench
} // namespace wsv
