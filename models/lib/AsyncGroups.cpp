//===- AsyncGroups.cpp - reference model of async operations and their groups --------===//
#include "wsv/models/AsyncGroups.h"

#include <algorithm>

namespace wsv {
namespace models {

void AsyncGroupQueue::issue(uint32_t OpId) { Ops.push_back(Op{OpId}); }

void AsyncGroupQueue::commit() {
  Ends.push_back(static_cast<uint32_t>(Ops.size()));
  dropFinished();
}

void AsyncGroupQueue::dropFinished() {
  // A wait_group N checks the groups before the N most recent; the oldest groups, once every
  // operation in them is done, pass every such check whether they are kept or not. Dropping
  // them keeps the queue as long as what is in flight (a loop commits without end).
  size_t Groups = 0, End = 0;
  while (Groups < Ends.size() &&
         std::all_of(Ops.begin() + End, Ops.begin() + Ends[Groups],
                     [](const Op &O) { return O.Done && O.ReadDone; }))
    End = Ends[Groups++];
  if (!Groups)
    return;
  Ops.erase(Ops.begin(), Ops.begin() + End);
  Ends.erase(Ends.begin(), Ends.begin() + Groups);
  for (uint32_t &E : Ends)
    E -= static_cast<uint32_t>(End);
}

AsyncGroupQueue::Op *AsyncGroupQueue::find(uint32_t OpId) {
  // The open group first, then the committed ones from the oldest: a loop may issue the same
  // operation again while an older instance is still in flight.
  for (size_t I = committedEnd(); I < Ops.size(); ++I)
    if (Ops[I].Id == OpId)
      return &Ops[I];
  for (size_t I = 0; I < committedEnd(); ++I)
    if (Ops[I].Id == OpId)
      return &Ops[I];
  return nullptr;
}

bool AsyncGroupQueue::completeRead(uint32_t OpId) {
  Op *O = find(OpId);
  if (!O)
    return false;
  O->ReadDone = true;
  return true;
}

bool AsyncGroupQueue::complete(uint32_t OpId) {
  Op *O = find(OpId);
  if (!O)
    return false;
  O->ReadDone = O->Done = true;
  dropFinished();
  return true;
}

bool AsyncGroupQueue::waitPasses(uint32_t N, bool ReadOnly) const {
  // Every committed group except the N most recent must be complete; the open group is not
  // waited for at all.
  size_t MustFinish = Ends.size() > N ? Ends.size() - N : 0;
  size_t End = MustFinish ? Ends[MustFinish - 1] : 0;
  for (size_t I = 0; I < End; ++I)
    if (!(ReadOnly ? Ops[I].ReadDone : Ops[I].Done))
      return false;
  return true;
}

void AsyncGroupQueue::retire(uint32_t N, bool ReadOnly) {
  size_t MustFinish = Ends.size() > N ? Ends.size() - N : 0;
  size_t End = MustFinish ? Ends[MustFinish - 1] : 0;
  for (size_t I = 0; I < End; ++I) {
    Ops[I].ReadDone = true;
    Ops[I].Done |= !ReadOnly;
  }
  dropFinished();
}

void AsyncGroupQueue::completeAll() {
  for (Op &O : Ops)
    O.ReadDone = O.Done = true;
  dropFinished();
}

std::vector<uint32_t> AsyncGroupQueue::inFlight() const {
  std::vector<uint32_t> Ids;
  forEachInFlight([&](uint32_t Id) { Ids.push_back(Id); });
  return Ids;
}

std::vector<uint32_t> AsyncGroupQueue::readsInFlight() const {
  std::vector<uint32_t> Ids;
  forEachInFlight([&](uint32_t Id) { Ids.push_back(Id); }, /*Reads=*/true);
  return Ids;
}

void Tcgen05CommitTracker::issue(uint32_t OpId) { InFlight.push_back(OpId); }

bool Tcgen05CommitTracker::commit(uint32_t CommitId) {
  if (InFlight.empty())
    return true;
  Commits.push_back(Commit{CommitId, InFlight});
  return false;
}

std::vector<uint32_t> Tcgen05CommitTracker::complete(uint32_t OpId) {
  InFlight.erase(std::remove(InFlight.begin(), InFlight.end(), OpId), InFlight.end());
  std::vector<uint32_t> Due;
  for (Commit &C : Commits)
    C.Waiting.erase(std::remove(C.Waiting.begin(), C.Waiting.end(), OpId), C.Waiting.end());
  for (auto It = Commits.begin(); It != Commits.end();) {
    if (It->Waiting.empty()) {
      Due.push_back(It->Id);
      It = Commits.erase(It);
    } else {
      ++It;
    }
  }
  return Due;
}

std::vector<uint32_t> Tcgen05CommitTracker::completeOldest() {
  std::vector<uint32_t> Ops = Commits.empty() ? InFlight : Commits.front().Waiting;
  std::vector<uint32_t> Due;
  for (uint32_t Op : Ops)
    for (uint32_t C : complete(Op))
      Due.push_back(C);
  return Due;
}

} // namespace models
} // namespace wsv
