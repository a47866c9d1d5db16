//===- InstanceParts.h - an instance's agents after unrolling, and their parts ------===//
//
// Private to RoleProgramInstance.cpp; RoleProgramParts.cpp implements it.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/RoleProgram.h"

#include "llvm/ADT/BitVector.h"

#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace instance {

/// The epilogue agent starts once every role of its CTA finished, which only a barrier of
/// all the CTA's (or the cluster's) threads makes true. Its steps before the first such
/// barrier run as soon as their own threads finished their role (B5's tcgen05.dealloc by
/// warp 0 while writeback 1 may still read TMEM): each moves to the end of the role agent
/// whose threads run it. One that threads of several agents run stays (then the order is
/// an assumption, which the verdict lists).
void startEpiloguesEarly(ConcreteSystem &Out);

/// A named barrier that one agent alone uses in its CTA, and that each of its steps
/// completes at once with all the threads it counts (H5's per-warpgroup bar.sync between
/// epilogue chunks), orders nothing the model can see: the agent's threads already move
/// together. Such steps go, which shortens every schedule through the epilogue (H5's
/// phase skip: 338 steps to 210) and the states on the way. A count the agent does not
/// meet, or an id two agents reach (the bugs), keeps every step on it.
void dropPrivateNamedBarriers(ConcreteSystem &Out);

/// Appends C to A's steps, or folds it into the last one where nothing can tell them apart:
/// back-to-back generic accesses of the same slots (four stmatrix into one staging slot),
/// tcgen05.ld or tcgen05.st of adjacent columns, and MMAs of one queue (one async operation).
void appendStep(ConcreteAgent &A, ConcreteStep C);

/// Whether an async operation of A may still be in flight after its last step: issued
/// after the last wait_group 0 of its queue (tcgen05: after the last commit).
bool inFlightAtEnd(const ConcreteAgent &A);

/// The first step inside loop items (a part's loop-forever step names its line).
unsigned firstEvent(const RoleProgram &R, const std::vector<RoleItem> &Items);

/// Why a part (threads Mask of an agent whose threads are Whole) cannot run step S, whose
/// collective unit is Unit (0: none): the hardware counts or elects by warp, or runs a
/// collective by warp or warpgroup, where the parts split one; empty if it can.
std::string splitUnit(const Protocol &P, const RoleStep &S, unsigned Unit,
                      const llvm::BitVector &Mask, const llvm::BitVector &Whole);

} // namespace instance
} // namespace analyzer
} // namespace wsv
