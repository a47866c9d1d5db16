//===- ExploreState.cpp - a state packed into integers and back --------------------===//
//
// A breadth-first search may hold millions of states waiting to be expanded (a periodic
// system of H5's tiles once held 15 GB of them). Packed, a state is a few hundred bytes of
// variable-length integers (KeyWriter) in one allocation; the search unpacks each when it
// expands it. Unlike the key, the packed form leaves nothing out.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include "llvm/ADT/bit.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

void State::save(KeyWriter &Out) const {
  Out.put(Agents.size());
  for (const AgentState &A : Agents) {
    Out.put(A.Pc);
    // Most agents never issue a cp.async: a flag bit, and the queue only where it is used
    // (two words more per agent and state cost H5's proof 6%).
    const bool CpAsync = A.CpAsync.committedGroups() || A.CpAsync.uncommitted();
    Out.put(A.Arrived | A.ClusterArrived << 1 | uint64_t(CpAsync) << 2);
    Out.put(A.Ticket);
    Out.put(A.ClusterTicket);
    A.Wgmma.save(Out);
    A.Bulk.save(Out);
    if (CpAsync)
      A.CpAsync.save(Out);
    A.Tcgen05.save(Out);
    Out.put(A.Laps);
    Out.put(A.Occurrence);
    Out.put(A.InnerLaps);
    Out.put(A.Probed);
    Out.put(A.TmemLoading);
    Out.put(A.TmemStoring);
    Out.putList(A.Unfenced);
    Out.putList(A.Unpublished);
    Out.put(A.LoneCommits.size());
    for (auto [Commit, Due] : A.LoneCommits)
      Out.put(uint64_t(Due) << 32 | Commit);
  }
  Out.put(Barriers.size());
  for (const models::Mbarrier &B : Barriers)
    B.save(Out);
  Out.put(Named.size());
  for (const models::NamedBarrierFile &F : Named)
    F.save(Out);
  Cluster.save(Out);
  Out.put(Tmem.size());
  for (const models::TmemAllocator &T : Tmem)
    T.save(Out);
  Out.put(TmemAllocs.size());
  for (const auto &Allocs : TmemAllocs) {
    Out.put(Allocs.size());
    for (auto [Column, Columns] : Allocs)
      Out.put(uint64_t(Column) << 32 | Columns);
  }
  Out.put(Loads.size());
  for (const LoadInFlight &L : Loads) {
    Out.put(L.Agent);
    Out.put(L.Step);
    Out.put(L.Copy);
  }
  Out.put(Filled.size());
  for (uintptr_t W : Filled.getData())
    Out.put(W);
  Out.putSigned(ExitLaps);
  Out.putSigned(TailExit);
  Out.put(TailLaps);
  Out.put(InnerExits.size());
  for (auto [Occurrence, Exit] : InnerExits) {
    Out.put(Occurrence);
    Out.put(Exit);
  }
}

void State::load(llvm::StringRef Bytes) {
  KeyReader In(Bytes);
  auto U32 = [&] { return static_cast<uint32_t>(In.get()); };
  Agents.resize(In.get());
  for (AgentState &A : Agents) {
    A.Pc = U32();
    uint64_t Flags = In.get();
    A.Arrived = Flags & 1;
    A.ClusterArrived = (Flags >> 1) & 1;
    A.Ticket = In.get();
    A.ClusterTicket = In.get();
    A.Wgmma.load(In);
    A.Bulk.load(In);
    if ((Flags >> 2) & 1)
      A.CpAsync.load(In);
    else
      A.CpAsync = models::AsyncGroupQueue();
    A.Tcgen05.load(In);
    A.Laps = U32();
    A.Occurrence = U32();
    A.InnerLaps = U32();
    A.Probed = U32();
    A.TmemLoading = U32();
    A.TmemStoring = U32();
    A.Unfenced.resize(In.get());
    for (uint32_t &U : A.Unfenced)
      U = U32();
    A.Unpublished.resize(In.get());
    for (uint32_t &U : A.Unpublished)
      U = U32();
    A.LoneCommits.resize(In.get());
    for (auto &[Commit, Due] : A.LoneCommits) {
      uint64_t V = In.get();
      Commit = static_cast<uint32_t>(V);
      Due = static_cast<uint32_t>(V >> 32);
    }
  }
  Barriers.resize(In.get());
  for (models::Mbarrier &B : Barriers)
    B.load(In);
  Named.resize(In.get());
  for (models::NamedBarrierFile &F : Named)
    F.load(In);
  Cluster.load(In);
  Tmem.resize(In.get());
  for (models::TmemAllocator &T : Tmem)
    T.load(In);
  TmemAllocs.resize(In.get());
  for (auto &Allocs : TmemAllocs) {
    Allocs.resize(In.get());
    for (auto &[Column, Columns] : Allocs) {
      uint64_t V = In.get();
      Column = static_cast<uint32_t>(V >> 32);
      Columns = static_cast<uint32_t>(V);
    }
  }
  Loads.resize(In.get());
  for (LoadInFlight &L : Loads) {
    L.Agent = U32();
    L.Step = U32();
    L.Copy = U32();
  }
  Filled.clear();
  Filled.resize(In.get());
  constexpr unsigned Word = 8 * sizeof(uintptr_t); // BitVector's word
  for (unsigned I = 0, Bit = 0; I < Filled.getData().size(); ++I, Bit += Word) {
    // Set bit by bit: BitVector's words are read-only from outside.
    for (uint64_t W = In.get(); W; W &= W - 1)
      Filled.set(Bit + llvm::countr_zero(W));
  }
  ExitLaps = In.getSigned();
  TailExit = static_cast<int32_t>(In.getSigned());
  TailLaps = U32();
  InnerExits.resize(In.get());
  for (auto &[Occurrence, Exit] : InnerExits) {
    Occurrence = U32();
    Exit = U32();
  }
}
