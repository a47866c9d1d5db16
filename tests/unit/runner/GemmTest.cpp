#include "wsv/runner/Gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

using namespace wsv::runner;

namespace {

wsv::abi::KernelInfo info(uint32_t TileM, uint32_t TileN, uint32_t TileK, uint32_t Cluster,
                          bool Persistent = false) {
  wsv::abi::KernelInfo I;
  std::memset(&I, 0, sizeof I);
  I.Version = wsv::abi::KernelInfoVersion;
  I.TileM = TileM;
  I.TileN = TileN;
  I.TileK = TileK;
  I.Stages = 4;
  I.ClusterM = Cluster;
  I.Persistent = Persistent;
  I.MinKTiles = 1;
  return I;
}

Problem problem(uint32_t M, uint32_t N, uint32_t K) {
  Problem P;
  P.M = M;
  P.N = N;
  P.K = K;
  return P;
}

} // namespace

TEST(Shapes, AcceptsWholeTilesOnly) {
  const wsv::abi::KernelInfo I = info(128, 256, 64, 2);
  EXPECT_FALSE(shapeRefusal(I, problem(256, 256, 64)));
  EXPECT_FALSE(shapeRefusal(I, problem(768, 1280, 576)));
  // M must cover whole clusters of tiles.
  std::optional<std::string> Why = shapeRefusal(I, problem(128, 256, 64));
  ASSERT_TRUE(Why);
  EXPECT_NE(Why->find("M = 128 is not a positive multiple of 256"), std::string::npos) << *Why;
  EXPECT_NE(Why->find("cluster"), std::string::npos) << *Why;
  Why = shapeRefusal(I, problem(256, 300, 64));
  ASSERT_TRUE(Why);
  EXPECT_NE(Why->find("N = 300"), std::string::npos) << *Why;
  Why = shapeRefusal(I, problem(256, 256, 100));
  ASSERT_TRUE(Why);
  EXPECT_NE(Why->find("K = 100"), std::string::npos) << *Why;
  EXPECT_TRUE(shapeRefusal(I, problem(0, 256, 64)));
}

TEST(Shapes, RefusesWhatThirtyTwoBitIndexingCannotReach) {
  const wsv::abi::KernelInfo I = info(128, 128, 64, 1);
  EXPECT_TRUE(shapeRefusal(I, problem(65536, 65536, 64)));
  EXPECT_FALSE(shapeRefusal(I, problem(8192, 8192, 8192)));
}

TEST(Shapes, SmallestAndDefaultProblemsAreLegal) {
  for (const wsv::abi::KernelInfo &I :
       {info(128, 128, 64, 1), info(128, 256, 64, 1), info(128, 256, 64, 2, true)}) {
    const Problem S = smallestProblem(I, Dtype::F16);
    EXPECT_FALSE(shapeRefusal(I, S));
    EXPECT_EQ(S.M, I.TileM * I.ClusterM);
    EXPECT_EQ(S.Type, Dtype::F16);
    const std::vector<Problem> D = defaultCheckProblems(I, Dtype::Bf16);
    ASSERT_EQ(D.size(), 3u);
    for (const Problem &P : D)
      EXPECT_FALSE(shapeRefusal(I, P)) << P.str();
    // One non-square problem whose ring wraps more than twice and ends mid-round.
    EXPECT_NE(D[1].M, D[1].N);
    EXPECT_GT(D[1].K / I.TileK, 2 * I.Stages);
    EXPECT_NE(D[1].K / I.TileK % (2 * I.Stages), 0u);
  }
}

TEST(Elements, GridValuesAreExactInBothTypes) {
  for (int Q = -256; Q <= 256; ++Q) {
    if (Q == 0)
      continue;
    const float V = static_cast<float>(Q) / 256.0f;
    EXPECT_EQ(bf16ToFloat(gridValueBits(Dtype::Bf16, Q)), V) << Q;
    EXPECT_EQ(f16ToFloat(gridValueBits(Dtype::F16, Q)), V) << Q;
  }
}

TEST(Elements, F16Decoding) {
  EXPECT_EQ(f16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(f16ToFloat(0xc000), -2.0f);
  EXPECT_EQ(f16ToFloat(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
  EXPECT_EQ(f16ToFloat(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(f16ToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(f16ToFloat(PoisonBits)));
  EXPECT_TRUE(std::isnan(bf16ToFloat(PoisonBits)));
}

TEST(Elements, RandomDrawsAreNonZeroGridValuesAndDependOnTheSeed) {
  std::vector<uint16_t> A(10000), B(10000), C(10000);
  fillRandomGrid(A.data(), A.size(), Dtype::Bf16, 7, 1);
  fillRandomGrid(B.data(), B.size(), Dtype::Bf16, 7, 4); // thread count does not change the draw
  fillRandomGrid(C.data(), C.size(), Dtype::Bf16, 8, 1);
  EXPECT_EQ(A, B);
  EXPECT_NE(A, C);
  std::set<uint16_t> Distinct;
  for (uint16_t Bits : A) {
    const float V = bf16ToFloat(Bits);
    EXPECT_NE(V, 0.0f);
    EXPECT_LE(std::fabs(V), 1.0f);
    EXPECT_EQ(V * 256.0f, std::round(V * 256.0f));
    Distinct.insert(Bits);
  }
  EXPECT_GT(Distinct.size(), 400u); // of the 512 grid values
}

TEST(Compare, RoundedReferencePasses) {
  for (Dtype T : {Dtype::Bf16, Dtype::F16}) {
    std::vector<float> Ref(4096);
    std::vector<uint16_t> Out(Ref.size());
    for (size_t I = 0; I < Ref.size(); ++I)
      Ref[I] = (I % 2 ? 1.0f : -1.0f) * (1.0f + 30.0f * std::fabs(std::sin(0.37f * I)));
    // Output = the reference rounded to the element type through its own bits.
    for (size_t I = 0; I < Ref.size(); ++I) {
      float R = Ref[I];
      uint32_t U;
      std::memcpy(&U, &R, 4);
      if (T == Dtype::Bf16) {
        Out[I] = static_cast<uint16_t>((U + 0x7fff + ((U >> 16) & 1)) >> 16);
      } else {
        // Round to 11 significant bits, then encode (|R| < 65504, no subnormals for these).
        const int Exp = static_cast<int>((U >> 23) & 0xff) - 127;
        const float Scale = std::ldexp(1.0f, Exp - 10);
        const float Rounded = std::nearbyint(R / Scale) * Scale;
        uint32_t RU;
        std::memcpy(&RU, &Rounded, 4);
        const int E = static_cast<int>((RU >> 23) & 0xff) - 127 + 15;
        Out[I] = static_cast<uint16_t>(((RU >> 16) & 0x8000) | (E << 10) | ((RU >> 13) & 0x3ff));
      }
      ASSERT_NEAR(elementToFloat(T, Out[I]), R, std::fabs(R) * 0.004 + 1e-6) << I;
    }
    const Comparison C = compareWithReference(T, Out.data(), Ref.data(), Ref.size(), 3);
    EXPECT_TRUE(C.Pass) << dtypeName(T) << " rel " << C.RelFrobenius;
    EXPECT_EQ(C.Unwritten, 0u);
    EXPECT_EQ(C.OutOfTolerance, 0u);
    EXPECT_GT(C.RelFrobenius, 0.0);
  }
}

TEST(Compare, CatchesUnwrittenWrongAndNonFinite) {
  std::vector<float> Ref(1000, 3.0f);
  std::vector<uint16_t> Out(Ref.size(), 0x4040); // 3.0 in bf16
  ASSERT_TRUE(compareWithReference(Dtype::Bf16, Out.data(), Ref.data(), Ref.size()).Pass);

  std::vector<uint16_t> Bad = Out;
  Bad[17] = PoisonBits;           // never written
  Bad[500] = 0x4080;              // 4.0: a wrong element
  Bad[900] = 0x7f80;              // +inf
  const Comparison C = compareWithReference(Dtype::Bf16, Bad.data(), Ref.data(), Ref.size(), 2);
  EXPECT_FALSE(C.Pass);
  EXPECT_EQ(C.Unwritten, 1u);
  EXPECT_EQ(C.OutOfTolerance, 1u);
  EXPECT_EQ(C.NonFinite, 1u);
  EXPECT_EQ(C.FirstBad, 17u);
  EXPECT_DOUBLE_EQ(C.MaxAbsError, 1.0);

  // One element a single bf16 ulp off (3.0 -> 3.015625) stays within the element bound.
  std::vector<uint16_t> Ulp = Out;
  Ulp[3] = 0x4041;
  EXPECT_TRUE(compareWithReference(Dtype::Bf16, Ulp.data(), Ref.data(), Ref.size()).Pass);
}

TEST(Compare, ToleranceIsTighterForF16) {
  const Tolerance B = toleranceFor(Dtype::Bf16), F = toleranceFor(Dtype::F16);
  EXPECT_LT(F.Rel, B.Rel);
  EXPECT_LT(F.Frobenius, B.Frobenius);
  // bf16 rounding (half an ulp, up to 2^-8 relative) must pass; a 2% error must not.
  EXPECT_GE(B.Rel, std::ldexp(1.0, -8));
  EXPECT_LT(B.Rel, 0.02);
}
