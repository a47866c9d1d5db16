//===- ExplainTrace.cpp - read a wsv-trace/1 document ------------------------------===//
//
// Every accessor takes the JSON path of the value it reads, so that the first wrong field
// becomes one error naming it. The parser runs without exceptions (nlohmann's allow_exceptions
// = false) and every value's type is checked before it is converted, so nothing throws.
//
//===----------------------------------------------------------------------------------===//
#include "ExplainTrace.h"
#include "TraceJson.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <string>

using nlohmann::json;

namespace wsv {
namespace report {

std::string TraceWait::str() const {
  if (K == Kind::Other)
    return Op;
  if (K == Kind::Named)
    return Op + " " + std::to_string(Id) + ", " + std::to_string(Threads);
  return Barrier + "[" + std::to_string(Index) + "] parity " + std::to_string(Parity);
}

bool TraceWait::sameWait(const TraceWait &O) const {
  if (K != O.K)
    return false;
  if (K == Kind::Named)
    return Id == O.Id && Threads == O.Threads;
  if (K == Kind::Other)
    return Op == O.Op;
  return Barrier == O.Barrier && Index == O.Index && Parity == O.Parity;
}

namespace {

/// Reads fields of one JSON object, remembering the first problem with its path.
class Reader {
public:
  explicit Reader(std::string &Error) : Error(Error) {}

  bool failed() const { return !Error.empty(); }

  bool fail(const std::string &Path, const std::string &What) {
    if (Error.empty())
      Error = Path + ": " + What;
    return false;
  }

  const json *field(const json &Obj, const std::string &Path, const char *Name,
                    bool Required = true) {
    auto It = Obj.find(Name);
    if (It == Obj.end() || (It->is_null() && Required)) {
      if (Required)
        fail(join(Path, Name), "missing");
      return nullptr;
    }
    return &*It;
  }

  bool string(const json &Obj, const std::string &Path, const char *Name, std::string &Out,
              bool Required = true) {
    const json *V = field(Obj, Path, Name, Required);
    if (!V)
      return !Required;
    if (V->is_null())
      return true; // an optional field written as null
    if (!V->is_string())
      return fail(join(Path, Name), "expected a string");
    Out = V->get<std::string>();
    return true;
  }

  template <typename T>
  bool value(const json &V, const std::string &Path, T &Out,
             uint64_t Max = std::numeric_limits<T>::max()) {
    if (!V.is_number_unsigned() && !(V.is_number_integer() && V.get<int64_t>() >= 0))
      return fail(Path, "expected a non-negative integer");
    uint64_t X = V.get<uint64_t>();
    if (X > Max)
      return fail(Path, "expected at most " + std::to_string(Max) + ", got " + std::to_string(X));
    Out = static_cast<T>(X);
    return true;
  }

  template <typename T>
  bool number(const json &Obj, const std::string &Path, const char *Name, T &Out,
              uint64_t Max = std::numeric_limits<T>::max()) {
    const json *V = field(Obj, Path, Name);
    return V && value(*V, join(Path, Name), Out, Max);
  }

  template <typename T>
  bool optionalNumber(const json &Obj, const std::string &Path, const char *Name,
                      std::optional<T> &Out, uint64_t Max = std::numeric_limits<T>::max()) {
    const json *V = field(Obj, Path, Name, /*Required=*/false);
    if (!V || V->is_null())
      return true;
    T X{};
    if (!value(*V, join(Path, Name), X, Max))
      return false;
    Out = X;
    return true;
  }

  bool boolean(const json &Obj, const std::string &Path, const char *Name, bool &Out) {
    const json *V = field(Obj, Path, Name);
    if (!V)
      return false;
    if (!V->is_boolean())
      return fail(join(Path, Name), "expected true or false");
    Out = V->get<bool>();
    return true;
  }

  bool dim3(const json &Obj, const std::string &Path, const char *Name, Dim3 &Out) {
    const json *V = field(Obj, Path, Name);
    if (!V)
      return false;
    if (!V->is_array() || V->size() != 3)
      return fail(join(Path, Name), "expected [x, y, z]");
    for (unsigned I = 0; I < 3; ++I)
      if (!value((*V)[I], join(Path, Name) + "[" + std::to_string(I) + "]", Out[I]))
        return false;
    return true;
  }

  const json *array(const json &Obj, const std::string &Path, const char *Name,
                    bool Required = true) {
    const json *V = field(Obj, Path, Name, Required);
    if (!V)
      return nullptr;
    if (!V->is_array()) {
      fail(join(Path, Name), "expected an array");
      return nullptr;
    }
    return V;
  }

  const json *object(const json &Obj, const std::string &Path, const char *Name) {
    const json *V = field(Obj, Path, Name);
    if (!V)
      return nullptr;
    if (!V->is_object()) {
      fail(join(Path, Name), "expected an object");
      return nullptr;
    }
    return V;
  }

  bool strings(const json &Obj, const std::string &Path, const char *Name,
               std::vector<std::string> &Out) {
    const json *A = array(Obj, Path, Name);
    if (!A)
      return false;
    for (size_t I = 0; I < A->size(); ++I) {
      if (!(*A)[I].is_string())
        return fail(join(Path, Name) + "[" + std::to_string(I) + "]", "expected a string");
      Out.push_back((*A)[I].get<std::string>());
    }
    return true;
  }

  static std::string join(const std::string &Path, const char *Name) {
    return Path.empty() ? std::string(Name) : Path + "." + Name;
  }

private:
  std::string &Error;
};

bool readWait(Reader &R, const json &Obj, const std::string &Path, TraceWait &W) {
  const json *V = R.object(Obj, Path, "wait");
  if (!V)
    return false;
  std::string P = Path + ".wait";
  if (!R.string(*V, P, "op", W.Op))
    return false;
  if (V->contains("barrier")) {
    W.K = TraceWait::Kind::Mbarrier;
    return R.string(*V, P, "barrier", W.Barrier) && R.number(*V, P, "index", W.Index) &&
           R.number(*V, P, "parity", W.Parity, 1);
  }
  if (V->contains("id")) {
    W.K = TraceWait::Kind::Named;
    std::optional<unsigned> Threads; // a solver may leave the count out: 0, not known
    if (!R.number(*V, P, "id", W.Id, 15) || !R.optionalNumber(*V, P, "threads", Threads))
      return false;
    W.Threads = Threads.value_or(0);
    return true;
  }
  // A solver's agent stopped at something else (a loop that never ends): the op says what.
  W.K = TraceWait::Kind::Other;
  return true;
}

bool readStuck(Reader &R, const json &V, const std::string &P, TraceStuck &S, bool Hw) {
  if (!V.is_object())
    return R.fail(P, "expected an object");
  if (!R.string(V, P, "role", S.Role) || !readWait(R, V, P, S.Wait) ||
      !R.optionalNumber(V, P, "sm", S.Sm))
    return false;
  if (Hw)
    return R.dim3(V, P, "cta", S.Cta) && R.number(V, P, "cluster_rank", S.ClusterRank) &&
           R.number(V, P, "warp", S.Warp) && R.number(V, P, "iteration", S.Iteration) &&
           R.number(V, P, "since_ns", S.SinceNs) &&
           R.number(V, P, "captured_ns", S.CapturedNs) &&
           R.boolean(V, P, "reporter", S.Reporter);
  // A solver knows no warp or clock; its counters may be text (`t=1 k=3`).
  std::optional<unsigned> Warp, Rank, Line;
  if (!R.optionalNumber(V, P, "warp", Warp) || !R.optionalNumber(V, P, "cluster_rank", Rank) ||
      !R.optionalNumber(V, P, "ptx_line", Line))
    return false;
  S.Warp = Warp.value_or(0);
  S.WarpKnown = Warp.has_value();
  S.ClusterRank = Rank.value_or(0);
  S.PtxLine = Line.value_or(0);
  if (V.contains("cta") && !R.dim3(V, P, "cta", S.Cta))
    return false;
  if (!R.string(V, P, "part_of", S.PartOf, /*Required=*/false) ||
      !R.string(V, P, "threads", S.PartThreads, /*Required=*/false))
    return false;
  if (const json *It = R.field(V, P, "iteration", /*Required=*/false)) {
    if (It->is_string()) {
      S.IterationText = It->get<std::string>();
      // One counter (`k=3`) is the iteration; several stay text.
      llvm::StringRef Text(S.IterationText);
      if (Text.count('=') == 1)
        Text.split('=').second.trim().getAsInteger(10, S.Iteration);
    } else if (!It->is_null() && !R.value(*It, P + ".iteration", S.Iteration)) {
      return false;
    }
  }
  return true;
}

bool readGroup(Reader &R, const json &V, const std::string &P, TraceGroup &G) {
  if (!V.is_object())
    return R.fail(P, "expected an object");
  if (!R.string(V, P, "role", G.Role) || !readWait(R, V, P, G.Wait) ||
      !R.number(V, P, "ctas", G.Ctas))
    return false;
  const json *Warps = R.array(V, P, "warps");
  if (!Warps)
    return false;
  for (size_t I = 0; I < Warps->size(); ++I) {
    unsigned W = 0;
    if (!R.value((*Warps)[I], P + ".warps[" + std::to_string(I) + "]", W))
      return false;
    G.Warps.push_back(W);
  }
  const json *It = R.array(V, P, "iterations");
  if (!It)
    return false;
  if (It->size() != 2)
    return R.fail(P + ".iterations", "expected [min, max]");
  return R.value((*It)[0], P + ".iterations[0]", G.FirstIteration) &&
         R.value((*It)[1], P + ".iterations[1]", G.LastIteration);
}

bool readStep(Reader &R, const json &V, const std::string &P, TraceStep &S) {
  if (!V.is_object())
    return R.fail(P, "expected an object");
  std::string Barrier;
  std::optional<unsigned> Line;
  // `agent` is what the verifier calls a role's copy; either names the role.
  bool HasRole = V.contains("role");
  bool Ok = R.string(V, P, HasRole ? "role" : "agent", S.Role) && R.string(V, P, "op", S.Op) &&
            R.optionalNumber(V, P, "ptx_line", Line) &&
            R.string(V, P, "source", S.Source, /*Required=*/false) &&
            R.optionalNumber(V, P, "warp", S.Warp) && R.optionalNumber(V, P, "index", S.Index) &&
            R.optionalNumber(V, P, "parity", S.Parity, 1) &&
            R.optionalNumber(V, P, "tx_bytes", S.TxBytes) &&
            R.optionalNumber(V, P, "count", S.Count) &&
            R.optionalNumber(V, P, "step", S.Step) &&
            R.string(V, P, "barrier", Barrier, /*Required=*/false);
  if (!Ok)
    return false;
  S.PtxLine = Line.value_or(0);
  S.Probe = V.contains("probe") && V["probe"].is_boolean() && V["probe"].get<bool>();
  // Loop counters: text as `wsv verify` writes them (`t=0 k=1`), an object as `wsv explore`
  // does ({"t": 0, "k": 1}); anything else is left out, as it only labels the step.
  if (V.contains("iterations") && V["iterations"].is_string())
    S.Iterations = V["iterations"].get<std::string>();
  else if (V.contains("iterations") && V["iterations"].is_object())
    for (const auto &[Name, Value] : V["iterations"].items())
      if (Value.is_number_integer())
        S.Iterations += (S.Iterations.empty() ? "" : " ") + Name + "=" +
                        std::to_string(Value.get<int64_t>());
  if (V.contains("cta") && !R.dim3(V, P, "cta", S.Cta))
    return false;
  if (!Barrier.empty())
    S.Barrier = Barrier;
  return true;
}

} // namespace

llvm::Expected<Trace> readTrace(llvm::StringRef Text) {
  json Doc = json::parse(Text.begin(), Text.end(), nullptr, /*allow_exceptions=*/false);
  auto Err = [](const std::string &Message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Message);
  };
  if (Doc.is_discarded())
    return Err("not a JSON document");
  if (!Doc.is_object())
    return Err("expected a JSON object at the top level");

  std::string Error;
  Reader R(Error);
  Trace T;
  std::string Schema, Source;
  if (!R.string(Doc, "", "schema", Schema))
    return Err(Error + " (is this a wsv-trace/1 file?)");
  if (Schema != TraceSchema)
    return Err("schema: '" + Schema + "' is not " + TraceSchema);
  if (!R.string(Doc, "", "source", Source))
    return Err(Error);
  if (Source == "hardware")
    T.Source = Trace::Origin::Hardware;
  else if (Source == "solver")
    T.Source = Trace::Origin::Solver;
  else
    return Err("source: expected 'hardware' or 'solver', got '" + Source + "'");

  bool Hw = T.Source == Trace::Origin::Hardware;
  bool Ok = R.string(Doc, "", "kernel", T.Kernel) && R.string(Doc, "", "entry", T.Entry) &&
            R.string(Doc, "", "variant", T.Variant, /*Required=*/false) &&
            R.string(Doc, "", "ptx", T.Ptx) && R.strings(Doc, "", "roles", T.Roles) &&
            R.strings(Doc, "", "barriers", T.Barriers) &&
            ((!Hw && !Doc.contains("silent_roles")) ||
             R.strings(Doc, "", "silent_roles", T.SilentRoles));
  if (Ok) {
    if (const json *L = R.object(Doc, "", "launch")) {
      // A solver's launch may hold only what it assumed: the block and the parameters.
      auto Dim = [&](const char *Name, Dim3 &Out) {
        return (!Hw && !L->contains(Name)) || R.dim3(*L, "launch", Name, Out);
      };
      Ok = Dim("grid", T.Launch.Grid) && Dim("block", T.Launch.Block) &&
           Dim("cluster", T.Launch.Cluster) &&
           ((!Hw && !L->contains("smem_bytes")) ||
            R.number(*L, "launch", "smem_bytes", T.Launch.SmemBytes));
      if (Ok && (Hw || L->contains("problem"))) {
        if (const json *Pr = R.object(*L, "launch", "problem"))
          Ok = R.number(*Pr, "launch.problem", "m", T.Launch.M) &&
               R.number(*Pr, "launch.problem", "n", T.Launch.N) &&
               R.number(*Pr, "launch.problem", "k", T.Launch.K) &&
               R.string(*Pr, "launch.problem", "dtype", T.Launch.Dtype);
        else
          Ok = false;
      }
      if (Ok && !Hw && L->contains("first_cta")) {
        uint64_t First = 0;
        Ok = R.number(*L, "launch", "first_cta", First);
        T.Launch.FirstCta = First;
      }
      if (Ok && L->contains("parameters")) {
        if (const json *Ps = R.object(*L, "launch", "parameters"))
          for (auto It = Ps->begin(); Ok && It != Ps->end(); ++It)
            Ok = R.value(It.value(), "launch.parameters." + It.key(),
                         T.Launch.Parameters[It.key()]);
        else
          Ok = false;
      }
    } else {
      Ok = false;
    }
  }
  if (Ok && !Hw)
    Ok = R.string(Doc, "", "verdict", T.Verdict, /*Required=*/false) &&
         R.string(Doc, "", "property", T.Property, /*Required=*/false) &&
         R.string(Doc, "", "reason", T.Reason, /*Required=*/false) &&
         R.string(Doc, "", "check", T.Check, /*Required=*/false) &&
         R.optionalNumber(Doc, "", "certain_after_step", T.CertainAfter);
  // The explorer states its parameters among its assumptions (`K = 384`).
  if (Ok && !Hw)
    for (const auto &[Name, Value] : parametersFromAssumptions(Doc))
      T.Launch.Parameters.emplace(Name, Value);
  if (Ok && !Hw && Doc.contains("final_barriers")) {
    if (const json *A = R.array(Doc, "", "final_barriers"))
      for (size_t I = 0; Ok && I < A->size(); ++I) {
        const json &B = (*A)[I];
        std::string P = "final_barriers[" + std::to_string(I) + "]";
        TraceBarrierState St;
        if (!B.is_object())
          Ok = R.fail(P, "expected an object");
        else if (!B.contains("name") || !B["name"].is_string())
          Ok = R.fail(P + ".name", "expected a string");
        else if (!B.contains("pending") || !B["pending"].is_number_integer() ||
                 !B.contains("tx_count") || !B["tx_count"].is_number_integer())
          Ok = R.fail(P, "expected integers 'pending' and 'tx_count'");
        else {
          St.Name = B["name"].get<std::string>();
          St.Pending = B["pending"].get<int64_t>();
          St.TxCount = B["tx_count"].get<int64_t>();
          Ok = R.number(B, P, "phase", St.Phase) &&
               (!B.contains("in_flight") || R.number(B, P, "in_flight", St.InFlight));
        }
        T.FinalBarriers.push_back(std::move(St));
      }
    else
      Ok = false;
  }
  // Solver traces have no clock: the timing fields may be absent there.
  if (Ok && (Hw || Doc.contains("timeout_ns")))
    Ok = R.number(Doc, "", "timeout_ns", T.TimeoutNs);
  if (Ok && (Hw || Doc.contains("time_origin_ns")))
    Ok = R.number(Doc, "", "time_origin_ns", T.TimeOriginNs);
  if (Ok && (Hw || Doc.contains("dropped")))
    Ok = R.number(Doc, "", "dropped", T.Dropped);
  if (Ok) {
    if (const json *A = R.array(Doc, "", "stuck"))
      for (size_t I = 0; Ok && I < A->size(); ++I) {
        TraceStuck S;
        Ok = readStuck(R, (*A)[I], "stuck[" + std::to_string(I) + "]", S, Hw);
        T.Stuck.push_back(std::move(S));
      }
    else
      Ok = false;
  }
  if (Ok && (Hw || Doc.contains("summary"))) {
    if (const json *A = R.array(Doc, "", "summary"))
      for (size_t I = 0; Ok && I < A->size(); ++I) {
        TraceGroup G;
        Ok = readGroup(R, (*A)[I], "summary[" + std::to_string(I) + "]", G);
        T.Summary.push_back(std::move(G));
      }
    else
      Ok = false;
  }
  if (Ok) {
    const json *A = R.array(Doc, "", "steps", /*Required=*/!Hw);
    if (A && Hw && !A->empty())
      Ok = R.fail("steps", "a hardware capture has no schedule");
    for (size_t I = 0; Ok && A && I < A->size(); ++I) {
      TraceStep S;
      std::string Path = "steps[" + std::to_string(I) + "]";
      Ok = readStep(R, (*A)[I], Path, S);
      // Steps number the transitions in order, from 0: each one's is its predecessor's or
      // the next, and either every transition has one or none does.
      const TraceStep *Prev = T.Steps.empty() ? nullptr : &T.Steps.back();
      unsigned Want = Prev && Prev->Step ? *Prev->Step + 1 : 0;
      if (Ok && (Prev ? Prev->Step.has_value() != S.Step.has_value() : false))
        Ok = R.fail(Path + ".step", "either every step has one or none");
      else if (Ok && S.Step && !(*S.Step == Want || (Prev && *S.Step == *Prev->Step)))
        Ok = R.fail(Path + ".step", "expected " + std::to_string(Want) +
                                        (Prev ? " or " + std::to_string(*Prev->Step) : ""));
      T.Steps.push_back(std::move(S));
    }
    Ok = Ok && !R.failed();
  }
  if (!Ok)
    return Err(Error);

  // Names that refer to the trace's own tables must be in them.
  auto Known = [](const std::vector<std::string> &Names, const std::string &N) {
    for (const std::string &X : Names)
      if (X == N)
        return true;
    return false;
  };
  for (size_t I = 0; I < T.Stuck.size(); ++I) {
    const TraceStuck &S = T.Stuck[I];
    // A solver's stuck agent may be a copy of a role (one per warpgroup), named after it.
    if (Hw && !Known(T.Roles, S.Role))
      return Err("stuck[" + std::to_string(I) + "].role: '" + S.Role + "' is not in roles");
    if (S.Wait.isMbarrier() && !Known(T.Barriers, S.Wait.Barrier))
      return Err("stuck[" + std::to_string(I) + "].wait.barrier: '" + S.Wait.Barrier +
                 "' is not in barriers");
  }
  for (size_t I = 0; I < T.Summary.size(); ++I)
    if (!Known(T.Roles, T.Summary[I].Role))
      return Err("summary[" + std::to_string(I) + "].role: '" + T.Summary[I].Role +
                 "' is not in roles");
  for (const std::string &S : T.SilentRoles)
    if (!Known(T.Roles, S))
      return Err("silent_roles: '" + S + "' is not in roles");
  return T;
}

} // namespace report
} // namespace wsv
