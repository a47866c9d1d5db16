//===- Catalog.h - the check functions of the catalog, declared once ---------------===//
//
// Every check is `void wsv::analyzer::checks::<Function>(CheckContext &)`, named by its line in
// one of the category catalogs; the registry (Checks.cpp) and each check's own file include
// this instead of declaring the function again.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Checks.h"

namespace wsv {
namespace analyzer {
namespace checks {
#define WSV_CHECK(Function, Name, Category, Summary) void Function(CheckContext &Ctx);
#include "DeadlockChecks.def"
#include "RaceChecks.def"
#include "CrashChecks.def"
#undef WSV_CHECK
} // namespace checks
} // namespace analyzer
} // namespace wsv
