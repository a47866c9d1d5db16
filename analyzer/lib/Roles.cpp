//===- Roles.cpp - thread partitions, descriptions and role names -----------------===//
#include "wsv/analyzer/Roles.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;

const char *wsv::analyzer::toString(ThreadShape S) {
  switch (S) {
  case ThreadShape::All: return "all";
  case ThreadShape::Leader: return "leader";
  case ThreadShape::Partial: return "partial";
  case ThreadShape::Unknown: return "unknown";
  }
  return "unknown";
}

llvm::BitVector wsv::analyzer::reachingThreads(const ThreadSet &S) {
  llvm::BitVector R = S.members();
  for (const ThreadSet::ConditionalGroup &C : S.conditional())
    if (C.Threads.size() == R.size())
      R |= C.Threads;
  for (const ThreadSet::ElectedGroup &G : S.elected())
    if (G.Candidates.size() == R.size())
      R |= G.Candidates;
  return R;
}

ThreadShape wsv::analyzer::classifyThreads(const ThreadSet &S) {
  if (S.isUnknown())
    return ThreadShape::Unknown;
  unsigned N = S.blockThreads();
  if (S.isExact() && S.elected().empty() && S.members().count() == N && N > 0)
    return ThreadShape::All;
  llvm::BitVector Plain = S.members();
  for (const ThreadSet::ConditionalGroup &C : S.conditional())
    if (C.Threads.size() == Plain.size())
      Plain |= C.Threads;
  std::vector<unsigned> PerWarp((N + WarpSize - 1) / WarpSize, 0);
  for (int T = Plain.find_first(); T != -1; T = Plain.find_next(T))
    ++PerWarp[T / WarpSize];
  for (const ThreadSet::ElectedGroup &G : S.elected()) {
    if (G.Excluded)
      return ThreadShape::Partial;
    for (unsigned W : G.Warps)
      if (W < PerWarp.size())
        ++PerWarp[W];
  }
  for (unsigned C : PerWarp)
    if (C > 1)
      return ThreadShape::Partial;
  return ThreadShape::Leader;
}

std::vector<llvm::BitVector>
wsv::analyzer::partitionThreads(unsigned BlockThreads, llvm::ArrayRef<llvm::BitVector> Splitting) {
  std::map<std::vector<bool>, llvm::BitVector> Parts;
  for (unsigned T = 0; T < BlockThreads; ++T) {
    std::vector<bool> Signature(Splitting.size());
    for (unsigned I = 0; I < Splitting.size(); ++I)
      Signature[I] = T < Splitting[I].size() && Splitting[I].test(T);
    auto [It, New] = Parts.try_emplace(Signature, BlockThreads);
    It->second.set(T);
  }
  std::vector<llvm::BitVector> Out;
  for (auto &[Sig, Threads] : Parts)
    Out.push_back(Threads);
  std::sort(Out.begin(), Out.end(), [](const llvm::BitVector &A, const llvm::BitVector &B) {
    return A.find_first() < B.find_first();
  });
  return Out;
}

namespace {

std::string range(unsigned Lo, unsigned Hi, const char *Sep = "-") {
  return Lo == Hi ? std::to_string(Lo) : std::to_string(Lo) + Sep + std::to_string(Hi);
}

/// The set as one interval [Lo, Hi], if it is one.
bool interval(const llvm::BitVector &T, unsigned &Lo, unsigned &Hi) {
  int First = T.find_first();
  if (First < 0)
    return false;
  int Last = T.find_last();
  if (static_cast<unsigned>(Last - First + 1) != T.count())
    return false;
  Lo = First;
  Hi = Last;
  return true;
}

} // namespace

std::string wsv::analyzer::describeThreads(const llvm::BitVector &Threads,
                                           unsigned BlockThreads) {
  unsigned N = Threads.count();
  if (N == 0)
    return "no thread";
  if (N == BlockThreads && Threads.size() == BlockThreads)
    return "all " + std::to_string(N) + " threads";
  unsigned Lo, Hi;
  std::string Tids;
  if (interval(Threads, Lo, Hi)) {
    Tids = "tid " + range(Lo, Hi, "..");
    if (Lo % WarpSize == 0 && (Hi + 1) % WarpSize == 0) {
      unsigned W0 = Lo / WarpSize, W1 = Hi / WarpSize;
      if (Lo % WarpgroupSize == 0 && (Hi + 1) % WarpgroupSize == 0) {
        unsigned G0 = Lo / WarpgroupSize, G1 = Hi / WarpgroupSize;
        return (G0 == G1 ? "warpgroup " : "warpgroups ") + range(G0, G1) + " (" + Tids + ")";
      }
      std::string Warps = (W0 == W1 ? "warp " : "warps ") + range(W0, W1);
      unsigned G = W0 / 4;
      if (G == W1 / 4 && BlockThreads > WarpgroupSize)
        return Warps + " (warpgroup " + std::to_string(G) + (W0 == W1 ? " warp " : " warps ") +
               range(W0 % 4, W1 % 4) + ", " + Tids + ")";
      return Warps + " (" + Tids + ")";
    }
    return Tids;
  }
  // Not one interval: the run form of ThreadSet (`tid 128 every 128 (x2)`).
  ThreadSet S(Threads.size());
  S.Members = Threads;
  std::string Out = S.str();
  // ThreadSet appends the count; callers print their own.
  size_t Paren = Out.rfind(" (");
  return Paren == std::string::npos ? Out : Out.substr(0, Paren);
}

std::string wsv::analyzer::describeThreadSet(const ThreadSet &S) {
  if (S.isUnknown())
    return "unknown threads (" + S.reason() + ")";
  if (S.conditional().empty() && S.elected().size() == 1 && S.members().none() &&
      !S.elected()[0].Excluded && !S.elected()[0].Condition) {
    const auto &Warps = S.elected()[0].Warps;
    std::string W;
    bool Contiguous = !Warps.empty() && Warps.back() - Warps.front() + 1 == Warps.size();
    if (Warps.size() == 1)
      W = "warp " + std::to_string(Warps[0]);
    else if (Contiguous)
      W = "each of warps " + range(Warps.front(), Warps.back());
    else {
      W = "each of warps";
      for (unsigned X : Warps)
        W += " " + std::to_string(X);
    }
    return "elected lane of " + W;
  }
  if (S.isExact() && S.elected().empty())
    return describeThreads(S.members(), S.blockThreads());
  // Lanes picked by a value that is not a thread id (the first active lane): the bound.
  if (S.conditional().size() > 2)
    return "threads of " + describeThreads(reachingThreads(S), S.blockThreads()) +
           " chosen by a value that is not a thread id";
  std::string Out = S.str();
  size_t Paren = Out.rfind(" (");
  return Paren == std::string::npos || Out.back() != ')' ? Out : Out.substr(0, Paren);
}

std::string wsv::analyzer::roleName(const RoleActivity &A) {
  bool Mma = A.Wgmma || A.Tcgen05Mma;
  if (A.TmaLoad && Mma)
    return "mainloop";
  if (A.TmaLoad)
    return "producer";
  if (A.Tcgen05Mma)
    return "mma";
  if (A.Wgmma)
    return "consumer";
  if ((A.TmemLoad || A.SmemWrite) && A.TmaStore)
    return "writeback";
  if (A.TmemLoad)
    return "writeback";
  if (A.WaitsOnLoads)
    return "consumer";
  if (!A.Own)
    return "idle";
  return "";
}
