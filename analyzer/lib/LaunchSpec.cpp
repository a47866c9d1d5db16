//===- LaunchSpec.cpp - the reference kernels' wsv_kernel_info --------------------===//
#include "wsv/analyzer/LaunchSpec.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Field offsets of wsv::abi::KernelInfo version 1 (reference_kernels/common/wsv_abi.h): 15
/// little-endian uint32 fields, then two 64-byte name lists.
enum KernelInfoField : unsigned {
  FieldVersion = 0,
  FieldTileM = 1,
  FieldTileN = 2,
  FieldTileK = 3,
  FieldStages = 4,
  FieldThreads = 5,
  FieldClusterM = 6,
  FieldSmemBytes = 7,
  FieldPersistent = 8,
  FieldBoxARows = 9,
  FieldBoxBRows = 10,
  FieldBoxDRows = 11,
  FieldBoxDCols = 12,
  FieldTensorMaps = 13,
  FieldMinKTiles = 14,
  NumWordFields = 15,
};
constexpr unsigned KernelInfoBytes = NumWordFields * 4 + 64 + 64;
/// The reference GEMMs move bf16 or fp16 elements (wsv_abi.h, "Element types").
constexpr uint64_t ElementBytes = 2;

/// A field of the initializer; PTX leaves out trailing zero bytes, so those read as 0.
std::optional<uint32_t> word(const ptx::Initializer &Init, unsigned Field) {
  if (!Init.isPacked() || Init.elementWidth() != 1)
    return std::nullopt;
  uint32_t V = 0;
  for (unsigned B = 0; B < 4; ++B) {
    uint64_t Index = Field * 4 + B;
    if (Index < Init.size())
      V |= static_cast<uint32_t>(Init.element(Index) & 0xff) << (8 * B);
  }
  return V;
}

} // namespace

std::optional<LaunchSpec> wsv::analyzer::readKernelInfo(const ptx::Module &M,
                                                        const ptx::Function &F) {
  const ptx::VariableDecl *Info = M.globalVariable("wsv_kernel_info");
  if (!Info || !Info->initializer())
    return std::nullopt;
  const ptx::Initializer &Init = *Info->initializer();
  if (Info->dimensions().size() != 1 || Info->dimensions()[0] != KernelInfoBytes ||
      word(Init, FieldVersion) != 1u)
    return std::nullopt;
  // The ABI's parameter list: three tensor maps, D, M, N, K.
  if (F.params().size() != 7)
    return std::nullopt;
  auto Get = [&](unsigned Field) { return *word(Init, Field); };

  LaunchSpec S;
  S.Origin = "wsv_kernel_info";
  if (Get(FieldClusterM) >= 1)
    S.ClusterSize = Get(FieldClusterM);
  if (Get(FieldThreads) >= 1)
    S.BlockThreads = Get(FieldThreads);
  S.DynamicSmemBytes = Get(FieldSmemBytes);
  S.ParamNames = {"tmap_a", "tmap_b", "tmap_d", "d", "M", "N", "K"};
  uint64_t TileK = Get(FieldTileK);
  S.TileK = Get(FieldTileK);
  if (Get(FieldMinKTiles) >= 1)
    S.MinKTiles = Get(FieldMinKTiles);
  if (TileK && Get(FieldBoxARows))
    S.TensorBoxBytes[0] = Get(FieldBoxARows) * TileK * ElementBytes;
  if (TileK && Get(FieldBoxBRows))
    S.TensorBoxBytes[1] = Get(FieldBoxBRows) * TileK * ElementBytes;
  if (Get(FieldBoxDRows) && Get(FieldBoxDCols))
    S.TensorBoxBytes[2] = uint64_t(Get(FieldBoxDRows)) * Get(FieldBoxDCols) * ElementBytes;
  return S;
}
