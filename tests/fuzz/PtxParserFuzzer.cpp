//===- PtxParserFuzzer.cpp - libFuzzer entry point for the PTX front end -----------===//
//
// Built with -fsanitize=fuzzer,address,undefined under WSV_FUZZ; see README.md for how to
// run it. Every input goes through checkPtxInput, which aborts on a broken promise.
//
//===----------------------------------------------------------------------------------===//
#include "PtxInputCheck.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  wsv::fuzz::checkPtxInput(llvm::StringRef(reinterpret_cast<const char *>(Data), Size));
  return 0;
}
