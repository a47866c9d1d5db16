//===- ProtocolJson.cpp - the protocol IR as versioned JSON -----------------------===//
#include "ProtocolJson.h"

#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/ProtocolPrinter.h"
#include "wsv/analyzer/Roles.h"

using namespace wsv;
using namespace wsv::analyzer;
using nlohmann::json;

namespace {

json source(const SourceRef &S) {
  json J = {{"ptx_line", S.PtxLine}, {"ptx_column", S.PtxColumn}};
  json Frames = json::array();
  for (const CudaFrame &F : S.Cuda) {
    json Frame = {{"file", F.File}, {"line", F.Line}, {"column", F.Column}};
    if (!F.Function.empty())
      Frame["function"] = F.Function;
    Frames.push_back(std::move(Frame));
  }
  J["cuda"] = std::move(Frames);
  return J;
}

/// The value with every loop's iteration number at 0, when that is a constant.
std::optional<uint64_t> atStart(const Protocol &P, const Expr *E) {
  ExprContext &Ctx = P.Analysis->context();
  const Expr *First = Ctx.rewrite(E, [&](const Expr *X) -> const Expr * {
    return X->is(ExprKind::IterationVar) ? Ctx.constant(0, X->width()) : nullptr;
  });
  return First->isConstant() ? std::optional<uint64_t>(First->payload()) : std::nullopt;
}

json value(const Protocol &P, const ProtocolValue &V) {
  if (V.known()) {
    json J = {{"text", P.exprString(V.E)}, {"tree", report::exprTree(P, V.E)}};
    if (std::optional<uint64_t> C = V.constant())
      J["constant"] = *C;
    return J;
  }
  if (!V.Unknown.empty())
    return {{"unknown", V.Unknown}};
  return nullptr;
}

json intervals(const llvm::BitVector &B) {
  json Out = json::array();
  for (int T = B.find_first(); T != -1;) {
    int End = B.find_next_unset(T);
    unsigned Last = End == -1 ? B.size() - 1 : unsigned(End) - 1;
    Out.push_back({T, Last});
    T = End == -1 ? -1 : B.find_next(End);
  }
  return Out;
}

json threads(const Protocol &P, const ThreadSet &S) {
  json J = {{"description", describeThreadSet(S)}};
  if (S.isUnknown()) {
    J["unknown"] = S.reason();
    J["count"] = nullptr;
    return J;
  }
  std::optional<unsigned> N = S.count();
  J["count"] = N ? json(*N) : json(nullptr);
  J["members"] = intervals(S.members());
  json Elected = json::array();
  for (const ThreadSet::ElectedGroup &G : S.elected()) {
    json E = {{"warps", G.Warps}, {"excluded", G.Excluded}};
    if (G.Condition)
      E["condition"] = P.exprString(G.Condition);
    Elected.push_back(std::move(E));
  }
  J["elected"] = std::move(Elected);
  json Cond = json::array();
  for (const ThreadSet::ConditionalGroup &G : S.conditional()) {
    json C = {{"threads", intervals(G.Threads)}, {"condition", P.exprString(G.Condition)}};
    if (G.CtasWhereTrue)
      C["ctas_where_true"] = *G.CtasWhereTrue;
    Cond.push_back(std::move(C));
  }
  J["conditional"] = std::move(Cond);
  return J;
}

json barrierRef(const Protocol &P, const BarrierRef &R,
                llvm::ArrayRef<const ProtocolLoop *> Loops) {
  if (!R.present())
    return nullptr;
  json J = {{"text", formatBarrier(P, R, Loops)}};
  if (R.Address)
    J["address"] = P.exprString(R.Address);
  if (!R.resolved()) {
    J["unresolved"] = R.Unresolved;
    return J;
  }
  J["array"] = R.Array;
  J["slot"] = value(P, R.Slot);
  J["peer_rank"] = value(P, R.PeerRank);
  return J;
}

json bufferRef(const Protocol &P, const BufferRef &R, llvm::ArrayRef<const ProtocolLoop *> Loops) {
  if (!R.present())
    return nullptr;
  json J = {{"text", formatBuffer(P, R, Loops)}};
  if (R.Address)
    J["address"] = P.exprString(R.Address);
  if (!R.resolved()) {
    J["unresolved"] = R.Unresolved;
    return J;
  }
  J["buffer"] = R.Buffer;
  J["slot"] = value(P, R.Slot);
  J["byte_offset"] = R.ByteOffset;
  return J;
}

json items(const std::vector<ProtocolItem> &Items) {
  json Out = json::array();
  for (const ProtocolItem &I : Items)
    Out.push_back({{I.isEvent() ? "event" : "loop", I.Index}});
  return Out;
}

json event(const Protocol &P, unsigned Index, llvm::ArrayRef<const ProtocolLoop *> Loops) {
  const Event &E = P.Events[Index];
  json J = {{"index", Index},
            {"kind", toString(E.Kind)},
            {"opcode", E.Opcode},
            {"text", formatEvent(P, E, Loops)},
            {"source", source(E.Where)},
            {"threads", threads(P, E.Threads)},
            {"when", value(P, E.When)}};
  if (E.Sync)
    J["sync"] = models::toString(*E.Sync);
  auto Put = [&](const char *Key, const ProtocolValue &V) {
    if (!V.absent())
      J[Key] = value(P, V);
  };
  if (E.Barrier.present())
    J["barrier"] = barrierRef(P, E.Barrier, Loops);
  Put("count", E.Count);
  Put("tx_bytes", E.TxBytes);
  if (!E.Parity.absent()) {
    J["parity"] = value(P, E.Parity);
    J["parity_form"] = formatParity(P, E, Loops);
    if (E.Parity.known())
      if (std::optional<uint64_t> S = atStart(P, E.Parity.E))
        J["parity_at_start"] = *S;
  }
  Put("token", E.Token);
  if (E.BytesFrom != BytesOrigin::None) {
    J["bytes"] = value(P, E.Bytes);
    J["bytes_from"] = toString(E.BytesFrom);
  }
  if (E.Dst.present())
    J["dst"] = bufferRef(P, E.Dst, Loops);
  if (E.Src.present())
    J["src"] = bufferRef(P, E.Src, Loops);
  if (!E.Reads.empty()) {
    json Reads = json::array();
    for (const BufferRef &R : E.Reads)
      Reads.push_back(bufferRef(P, R, Loops));
    J["reads"] = std::move(Reads);
  }
  if (E.Kind == EventKind::NamedBarrier)
    J["named_barrier"] = {{"id", value(P, E.Named.Id)},
                          {"threads", E.Named.Threads.absent() ? json("all")
                                                               : value(P, E.Named.Threads)}};
  Put("wait_n", E.WaitN);
  Put("columns", E.Columns);
  Put("reg_count", E.RegCount);
  Put("cta_mask", E.CtaMask);
  if (E.Multicast)
    J["multicast"] = true;
  if (E.CtaGroup)
    J["cta_group"] = E.CtaGroup;
  if (E.Kind == EventKind::Setmaxnreg)
    J["increase"] = E.Increase;
  if (E.Kind == EventKind::GroupWait)
    J["read_only"] = E.ReadOnly;
  if (!E.Detail.empty())
    J["detail"] = E.Detail;
  if (!E.Reason.empty())
    J["reason"] = E.Reason;
  return J;
}

} // namespace

json report::exprTree(const Protocol &P, const Expr *E) {
  if (!E)
    return nullptr;
  unsigned W = E->width();
  switch (E->kind()) {
  case ExprKind::Constant:
    return E->payload();
  case ExprKind::Param: {
    std::string Name = E->name().str();
    for (unsigned K = 0; K < P.ParamSymbols.size(); ++K)
      if (P.ParamSymbols[K] == Name)
        Name = P.ParamNames[K];
    return {"param", W, Name, E->payload()};
  }
  case ExprKind::IterationVar:
    return {"iter", W, P.loopVar(static_cast<LoopId>(E->payload())), E->payload()};
  case ExprKind::SpecialReg:
    return {"sreg", W, toString(E->specialRegister())};
  case ExprKind::Symbol:
    return {"symbol", W, E->name().str()};
  case ExprKind::Phi:
  case ExprKind::Elect:
  case ExprKind::Opaque:
    return {toString(E->kind()), W, E->name().str()};
  case ExprKind::Load:
    return {"load", W, exprTree(P, E->op(0))};
  default: {
    json Node = {toString(E->kind()), W};
    for (const Expr *Op : E->ops())
      Node.push_back(exprTree(P, Op));
    return Node;
  }
  }
}

json report::protocolToJson(const Protocol &P) {
  json J;
  J["name"] = P.Kernel;
  J["launch"] = {{"threads", P.Launch.threads()},
                 {"block", {P.Launch.BlockX, P.Launch.BlockY, P.Launch.BlockZ}},
                 {"block_is_maximum", P.Launch.BlockIsMaximum},
                 {"cluster_size", P.Launch.ClusterSize},
                 // null: nothing states it, and 1 is assumed
                 {"cluster_from", P.ClusterFrom.empty() ? json() : json(P.ClusterFrom)},
                 {"from", P.LaunchFrom}};
  J["params"] = P.ParamNames;

  json Barriers = json::array();
  for (const BarrierArray &B : P.Barriers) {
    json Counts = json::array();
    for (const ProtocolValue &C : B.InitCounts)
      Counts.push_back(value(P, C));
    const char *SlotsFrom = B.SlotsFrom == BarrierArray::SlotsOrigin::Declaration ? "declaration"
                            : B.SlotsFrom == BarrierArray::SlotsOrigin::Accesses  ? "accesses"
                                                                                  : "single";
    Barriers.push_back({{"name", B.Name},
                        {"name_from", toString(B.NameFrom)},
                        {"symbol", B.Symbol},
                        {"base", B.Base ? json(P.exprString(B.Base)) : json(nullptr)},
                        {"offset", B.Offset},
                        {"stride", B.Stride},
                        {"slots", B.Slots},
                        {"slots_from", SlotsFrom},
                        {"init_counts", std::move(Counts)},
                        {"init_events", B.InitEvents}});
  }
  J["barriers"] = std::move(Barriers);

  json Buffers = json::array();
  for (const Buffer &B : P.Buffers)
    Buffers.push_back({{"name", B.Name},
                       {"symbol", B.Symbol},
                       {"base", P.exprString(B.Base)},
                       {"offset", B.Offset},
                       {"stride", B.Stride},
                       {"slots", B.Slots},
                       {"slot_bytes", B.SlotBytes ? json(*B.SlotBytes) : json(nullptr)}});
  J["buffers"] = std::move(Buffers);

  // Events and loops with the loops around them, so slot and parity forms read as in text.
  json Events = json::array(), Loops = json::array();
  std::vector<json> EventJson(P.Events.size()), LoopJson(P.Loops.size());
  std::vector<const ProtocolLoop *> Stack;
  std::function<void(const std::vector<ProtocolItem> &)> Walk =
      [&](const std::vector<ProtocolItem> &Body) {
        for (const ProtocolItem &I : Body) {
          if (I.isEvent()) {
            if (EventJson[I.Index].is_null())
              EventJson[I.Index] = event(P, I.Index, Stack);
            continue;
          }
          const ProtocolLoop &L = P.Loops[I.Index];
          json TripConditions = json::array();
          for (const auto &[C, Discharged] : L.TripConditions)
            TripConditions.push_back({{"condition", P.exprString(C)}, {"discharged", Discharged}});
          LoopJson[I.Index] = {{"index", I.Index},
                               {"var", P.loopVar(L.Loop)},
                               {"ptx_loop", L.Loop},
                               {"trip", value(P, L.Trip)},
                               {"trip_conditions", std::move(TripConditions)},
                               {"when", value(P, L.When)},
                               {"source", source(L.Where)},
                               {"body", items(L.Body)}};
          Stack.push_back(&L);
          Walk(L.Body);
          Stack.pop_back();
        }
      };
  Walk(P.Prologue);
  for (const Role &R : P.Roles)
    Walk(R.Body);
  Walk(P.Epilogue);
  for (unsigned E = 0; E < P.Events.size(); ++E)
    Events.push_back(EventJson[E].is_null() ? event(P, E, {}) : std::move(EventJson[E]));
  for (json &L : LoopJson)
    Loops.push_back(std::move(L));
  J["events"] = std::move(Events);
  J["loops"] = std::move(Loops);

  J["prologue"] = items(P.Prologue);
  json Roles = json::array();
  for (const Role &R : P.Roles)
    Roles.push_back({{"name", R.Name},
                     {"named_by_activity", R.NamedByActivity},
                     {"header", formatRoleHeader(P, R)},
                     {"threads", threads(P, R.Threads)},
                     {"active", threads(P, R.Active)},
                     {"when", value(P, R.When)},
                     {"body", items(R.Body)}});
  J["roles"] = std::move(Roles);
  J["epilogue"] = items(P.Epilogue);
  json Notes = json::array();
  for (const ProtocolNote &N : P.Notes)
    Notes.push_back({{"message", N.Message}, {"source", source(N.Where)}});
  J["notes"] = std::move(Notes);
  return J;
}
