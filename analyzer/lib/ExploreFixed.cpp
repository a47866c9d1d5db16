//===- ExploreFixed.cpp - counterexamples on the launches whose values the user fixed --===//
//
// `wsv verify --param K=320` asks about launches with K = 320. The argument for every K
// searches other values too (the small launches, the larger ones of the coverage search,
// the periodic systems): a proof of every K covers 320, but a counterexample on K = 512 says
// nothing about 320, and reporting it as the verdict failed a launch that cannot fail (the
// ring of tests/lit/verify/Inputs/ring2.bug-large-launch.ptx deadlocks only from 512 on).
// Such a counterexample becomes a note of the reason, and the launches with the fixed
// values are searched instead: the launch given in full where there is one (every cluster
// of it, ExploreLaunch.cpp), else the small launches and the coverage search restricted to
// launches that have the fixed values. A bug there is the verdict; none leaves it unknown.
//
// Only values the protocol reads count (M fixed for a kernel whose protocol never reads M
// does not set its launches apart), and the grid only where the protocol reads %nctaid.x.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

namespace {

bool isSpecial(const Expr *L, SpecialRegister Reg) {
  return L->is(ExprKind::SpecialReg) && L->specialRegister() == Reg;
}

/// A value that tells clusters or grids apart: the CTA's or cluster's index, or the grid's.
/// (The rank in the cluster and its shape do not: every CTA of the cluster is modeled.)
bool placesCluster(const Expr *L) {
  if (!L->is(ExprKind::SpecialReg))
    return false;
  switch (L->specialRegister()) {
  case SpecialRegister::CtaidX: case SpecialRegister::CtaidY: case SpecialRegister::CtaidZ:
  case SpecialRegister::NctaidX: case SpecialRegister::NctaidY: case SpecialRegister::NctaidZ:
  case SpecialRegister::ClusteridX: case SpecialRegister::ClusteridY:
  case SpecialRegister::ClusteridZ: case SpecialRegister::NclusteridX:
  case SpecialRegister::NclusteridY: case SpecialRegister::NclusteridZ: return true;
  default: return false;
  }
}

} // namespace

std::vector<std::string> Prover::paramAliases(const std::string &Name) const {
  std::vector<std::string> Names = {Name};
  for (size_t PI = 0; PI < P.ParamNames.size() && PI < P.ParamSymbols.size(); ++PI)
    if (P.ParamNames[PI] == Name || P.ParamSymbols[PI] == Name)
      for (const std::string &Alias : {P.ParamNames[PI], P.ParamSymbols[PI]})
        Names.push_back(Alias);
  return Names;
}

std::optional<uint64_t> Prover::fixedValue(const std::string &Name) const {
  for (const std::string &N : paramAliases(Name))
    if (auto It = O.Fixed.find(N); It != O.Fixed.end())
      return It->second;
  return std::nullopt;
}

bool Prover::hasFixedValues(const Instance &I) const {
  for (const auto &[Name, Value] : O.Fixed) {
    // The parameter's names: the one given, and its display or PTX name.
    std::vector<std::string> Names = paramAliases(Name);
    if (!programsRead(RP, [&](const Expr *L) {
          return L->is(ExprKind::Param) && llvm::is_contained(Names, L->name().str());
        }))
      continue;
    // Every name the launch gives it a value under must give the fixed one (a launch may
    // hold both the user's PTX name and the search's display name).
    bool Has = false;
    for (const std::string &N : Names)
      if (auto It = I.Params.find(N); It != I.Params.end()) {
        if (It->second != Value)
          return false;
        Has = true;
      }
    if (!Has)
      return false;
  }
  if (!O.Launch)
    return true;
  // A launch given in full also fixes the grid, and which clusters there are.
  const uint64_t Grid = I.GridCtas ? I.GridCtas : RP.ClusterSize;
  if (Grid != O.Launch->GridCtas &&
      programsRead(RP, [](const Expr *L) { return isSpecial(L, SpecialRegister::NctaidX); }))
    return false;
  return I.FirstCta < O.Launch->GridCtas;
}

std::string Prover::fixedValues() const {
  std::string Fixed;
  for (const auto &[Name, Value] : O.Fixed)
    Fixed += (Fixed.empty() ? "" : ", ") + Name + " = " + std::to_string(Value);
  if (O.Launch)
    Fixed += (Fixed.empty() ? "" : ", ") + std::string("a grid of ") +
             std::to_string(O.Launch->GridCtas) + " CTAs";
  return Fixed;
}

bool Prover::coversFixedValues() const {
  if (R.WholeLaunch)
    return true;
  // A statement for every tile count covers the launch's sizes below 2^20 and grids below
  // 2^16 (gridDomain): M = 2,000,000 fixed is not among them.
  if (Tiles) {
    for (const Expr *L : Grid)
      if (L->is(ExprKind::Param))
        if (std::optional<uint64_t> V = fixedValue(paramName(L)); V && *V >= (uint64_t(1) << 20))
          return false;
    if (O.Launch && O.Launch->GridCtas >= (uint64_t(1) << 16))
      return false;
  }
  if (!K || KStandIn)
    return true;
  std::optional<uint64_t> V = fixedValue(R.Parameter);
  return !V || (*V % O.TileK == 0 && *V >= O.TileK * O.MinTiles && *V < (uint64_t(1) << 24));
}

void Prover::searchFixedValues() {
  const std::string Fixed = fixedValues();
  const std::string Elsewhere =
      R.Verdict == ExploreVerdict::Clean
          ? "proved for " + R.ForParameters + ", which does not include " + Fixed
          : std::string("a ") + toString(R.Verdict) + " on " + launchName(R.Launch) +
                ", a launch without the values fixed (" + Fixed + "): " + R.Found.Message;
  R.Verdict = ExploreVerdict::Unknown;
  R.Found = {};
  R.Launch = {};
  R.Reason = Elsewhere;
  if (O.Launch)
    return exploreLaunch(); // its verdict is that launch's; the note stays in its reason
  std::optional<uint64_t> FixedK;
  if (!R.Parameter.empty())
    FixedK = fixedValue(R.Parameter);
  // A persistent kernel with K fixed: the argument over every grid and tile count for that
  // K alone (its small launches, and the classes of tile counts of its class of K). Its
  // proof covers whatever else is fixed; its bug counts where it has the fixed values.
  if (Tiles && FixedK && *FixedK % O.TileK == 0 && *FixedK >= O.TileK * O.MinTiles) {
    ParametricOptions OneK = O;
    OneK.Fixed.clear();
    ParametricResult Part;
    Prover ForK(RP, OneK, Part);
    ForK.OnlyTV = *FixedK / O.TileK;
    ForK.run();
    R.SolverQueries += Part.SolverQueries;
    R.States += Part.States;
    for (const std::string &Run : Part.Runs)
      R.Runs.push_back(Run);
    if (Part.Verdict == ExploreVerdict::Clean) {
      adoptVerdict(R, std::move(Part));
      R.Elsewhere = Elsewhere;
      R.OnlyK = *FixedK;
      return;
    }
    if (Part.Verdict != ExploreVerdict::Unknown && hasFixedValues(Part.Launch))
      return adoptVerdict(R, std::move(Part));
  }
  // The small launches with the fixed values: every k-tile count the search tries where
  // the k-loop's parameter is free, 1 and 2 tiles per CTA for a persistent kernel.
  Reached.clear();
  const unsigned First = static_cast<unsigned>(O.MinTiles), Ring = deepestRing();
  std::vector<Instance> Launches;
  for (unsigned J = First; J <= First + 2 * Ring; ++J) {
    const uint64_t KValue = FixedK ? *FixedK : J * O.TileK;
    // (launch() gives the k-loop's parameter under its display name, and O.Params the
    // fixed value under the name the user gave: hasFixedValues reads both.)
    if (!Tiles)
      Launches.push_back(launch(KValue));
    for (unsigned PerCta : {1u, 2u}) {
      if (!Tiles || KValue % O.TileK)
        break;
      std::optional<Instance> I = chooseInstance(RP, O.TileK, KValue / O.TileK, PerCta);
      if (!I)
        continue;
      for (const auto &[Name, Value] : O.Params)
        if (!I->Params.count(Name) || O.Fixed.count(Name))
          I->Params[Name] = Value;
      Launches.push_back(*I);
    }
    if (FixedK || !K)
      break; // one value of the k-loop's parameter to try
  }
  // Where the values fixed are every one the protocol reads and it reads no CTA index,
  // every cluster of every launch with them runs the same steps: the one launch explored
  // (its trip counts' conditions checked, not assumed) decides them all.
  const bool Exact = !Tiles && Launches.size() == 1 &&
                     !programsRead(RP, [&](const Expr *L) {
                       return (L->is(ExprKind::Param) && !O.Fixed.count(paramName(L)) &&
                               !O.Fixed.count(L->name().str())) ||
                              placesCluster(L) || L->is(ExprKind::Load) ||
                              L->is(ExprKind::Opaque);
                     });
  unsigned Explored = 0;
  std::string NotRun; // why the first launch that could not be instantiated was not
  for (Instance I : Launches) {
    if (!hasFixedValues(I))
      continue;
    I.CheckTripConditions = Exact;
    ConcreteSystem S = instantiate(RP, I);
    if (!S.Unknown.empty()) {
      if (NotRun.empty())
        NotRun = launchName(I) + ": " + S.Unknown;
      continue;
    }
    ++Explored;
    if (!explore(S, launchName(I), I)) {
      if (R.Verdict != ExploreVerdict::Unknown)
        return; // a bug of a launch with the fixed values
      return void(unknown(Elsewhere + "; " + R.Reason));
    }
    cover(S);
    if (Exact) {
      R.Verdict = ExploreVerdict::Clean;
      R.WholeLaunch = true;
      R.NotForEvery = Elsewhere;
      R.ForParameters = Fixed + " on any grid (the protocol reads no other parameter and no "
                                "CTA index: every cluster runs these steps)";
      std::vector<unsigned> Lines = unreachedLines();
      if (!Lines.empty())
        R.NotRun = "steps at " + std::to_string(Lines.size()) +
                   " PTX line(s) do not run with these values (" + lineList(Lines) + ")";
      return;
    }
  }
  if (O.CoverSteps) {
    OnlyFixed = true;
    bool Bounded = false;
    bool Clean = coverSteps(Explored, Bounded, NotRun);
    OnlyFixed = false;
    if (!Clean)
      return; // a bug of a launch with the fixed values
    if (Bounded)
      return void(unknown(Elsewhere + "; a launch with the values fixed ran out of states (" +
                          R.Reason + ")"));
  }
  if (!Explored)
    return void(unknown(Elsewhere + "; no launch with the values fixed could be explored" +
                        (NotRun.empty() ? std::string() : " (" + NotRun + ")")));
  unknown(Elsewhere + "; " + std::to_string(Explored) +
          " launch(es) with the values fixed explored without finding a bug" + coverage());
}
