#include "wsv/runner/HangReport.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace wsv {
namespace runner {

std::vector<std::string> splitNames(const char *List, size_t MaxLen) {
  std::vector<std::string> Out;
  const size_t Len = strnlen(List, MaxLen);
  std::string Cur;
  for (size_t I = 0; I <= Len; ++I) {
    if (I == Len || List[I] == ',') {
      Out.push_back(Cur);
      Cur.clear();
    } else {
      Cur += List[I];
    }
  }
  if (Out.size() == 1 && Out[0].empty())
    Out.clear();
  return Out;
}

std::string StuckWait::what() const {
  if (Op == abi::OpNamedBarrier)
    return "bar.sync " + std::to_string(Index) + " (" + std::to_string(Parity) + " threads)";
  return Barrier + "[" + std::to_string(Index) + "] parity " + std::to_string(Parity);
}

static std::string nameOr(const std::vector<std::string> &Names, uint32_t Id, const char *Kind) {
  if (Id < Names.size() && !Names[Id].empty())
    return Names[Id];
  return std::string(Kind) + "#" + std::to_string(Id);
}

HangReport readHangCapture(const abi::HangCapture &Capture, const abi::KernelInfo &Info,
                           uint64_t TimeoutNs) {
  HangReport R;
  R.Roles = splitNames(Info.Roles, sizeof Info.Roles);
  R.Barriers = splitNames(Info.Barriers, sizeof Info.Barriers);
  R.Dropped = Capture.Dropped;
  R.TimeoutNs = TimeoutNs;
  if (Capture.Magic != abi::HangCaptureMagic)
    return R;
  for (uint32_t I = 0; I < Capture.Capacity; ++I) {
    const abi::HangRecord &Rec = Capture.Records[I];
    if (Rec.Valid != abi::HangRecordValid)
      continue;
    StuckWait W;
    W.Op = static_cast<abi::SyncOp>(Rec.Op);
    W.RoleId = Rec.Role;
    W.Role = nameOr(R.Roles, Rec.Role, "role");
    W.BarrierId = Rec.Barrier;
    if (W.Op == abi::OpMbarrierWait)
      W.Barrier = nameOr(R.Barriers, Rec.Barrier, "barrier");
    W.Index = Rec.Index;
    W.Parity = Rec.Parity;
    W.Iteration = Rec.Iteration;
    std::copy(Rec.Cta, Rec.Cta + 3, W.Cta);
    W.ClusterRank = Rec.ClusterRank;
    W.Warp = Rec.Warp;
    W.Sm = Rec.Sm;
    W.SinceNs = Rec.SinceNs;
    W.CapturedNs = Rec.CapturedNs;
    W.Reporter = Rec.Reporter != 0;
    R.Waits.push_back(W);
  }
  return R;
}

std::vector<WaitGroup> HangReport::groups() const {
  using Key = std::tuple<uint32_t, int, uint32_t, uint32_t, uint32_t>;
  std::map<Key, WaitGroup> ByKey;
  std::map<Key, std::set<std::tuple<uint32_t, uint32_t, uint32_t>>> CtasOf;
  std::map<Key, std::set<uint32_t>> WarpsOf;
  std::vector<Key> Order;
  for (const StuckWait &W : Waits) {
    const Key K{W.RoleId, W.Op, W.BarrierId, W.Index, W.Parity};
    auto It = ByKey.find(K);
    if (It == ByKey.end()) {
      WaitGroup G;
      G.First = W;
      G.MinIteration = G.MaxIteration = W.Iteration;
      It = ByKey.emplace(K, G).first;
      Order.push_back(K);
    }
    WaitGroup &G = It->second;
    if (W.SinceNs < G.First.SinceNs)
      G.First = W;
    G.MinIteration = std::min(G.MinIteration, W.Iteration);
    G.MaxIteration = std::max(G.MaxIteration, W.Iteration);
    CtasOf[K].insert({W.Cta[0], W.Cta[1], W.Cta[2]});
    WarpsOf[K].insert(W.Warp);
  }
  std::vector<WaitGroup> Out;
  for (const Key &K : Order) {
    WaitGroup G = ByKey[K];
    G.Ctas = static_cast<uint32_t>(CtasOf[K].size());
    G.Warps.assign(WarpsOf[K].begin(), WarpsOf[K].end());
    Out.push_back(G);
  }
  // Roles in their declared order, then by barrier and slot: reads like the protocol comment.
  std::stable_sort(Out.begin(), Out.end(), [](const WaitGroup &A, const WaitGroup &B) {
    return std::tie(A.First.RoleId, A.First.Op, A.First.BarrierId, A.First.Index) <
           std::tie(B.First.RoleId, B.First.Op, B.First.BarrierId, B.First.Index);
  });
  return Out;
}

std::vector<std::string> HangReport::silentRoles() const {
  std::set<uint32_t> Seen;
  for (const StuckWait &W : Waits)
    Seen.insert(W.RoleId);
  std::vector<std::string> Out;
  for (uint32_t I = 0; I < Roles.size(); ++I)
    if (!Seen.count(I))
      Out.push_back(Roles[I]);
  return Out;
}

static std::string warpList(const std::vector<uint32_t> &Warps) {
  std::string S;
  for (size_t I = 0; I < Warps.size();) {
    size_t J = I;
    while (J + 1 < Warps.size() && Warps[J + 1] == Warps[J] + 1)
      ++J;
    if (!S.empty())
      S += ",";
    S += std::to_string(Warps[I]);
    if (J > I)
      S += "-" + std::to_string(Warps[J]);
    I = J + 1;
  }
  return (Warps.size() > 1 ? "warps " : "warp ") + S;
}

std::string HangReport::summary() const {
  std::ostringstream OS;
  if (Waits.empty()) {
    OS << "  no warp was inside an instrumented wait\n";
    return OS.str();
  }
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> AllCtas;
  for (const StuckWait &W : Waits)
    AllCtas.insert({W.Cta[0], W.Cta[1], W.Cta[2]});
  for (const WaitGroup &G : groups()) {
    const StuckWait &F = G.First;
    OS << "  " << F.Role << " (" << warpList(G.Warps) << ") waits "
       << (F.Op == abi::OpNamedBarrier ? "in " : "on ") << F.what();
    if (G.MinIteration == G.MaxIteration)
      OS << " at iteration " << G.MinIteration;
    else
      OS << " at iterations " << G.MinIteration << "-" << G.MaxIteration;
    OS << " in " << G.Ctas << " of " << AllCtas.size() << " reporting CTAs (first: CTA ("
       << F.Cta[0] << "," << F.Cta[1] << "," << F.Cta[2] << ")";
    if (F.ClusterRank)
      OS << " rank " << F.ClusterRank;
    OS << ")\n";
  }
  const std::vector<std::string> Silent = silentRoles();
  if (!Silent.empty()) {
    OS << "  not inside a wait (finished, or blocked outside an instrumented wait):";
    for (const std::string &S : Silent)
      OS << " " << S;
    OS << "\n";
  }
  if (Dropped)
    OS << "  " << Dropped << " more records did not fit the capture\n";
  return OS.str();
}

} // namespace runner
} // namespace wsv
