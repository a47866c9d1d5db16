#include "wsv/runner/Subprocess.h"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace wsv::runner;

TEST(Subprocess, KeepsTheLastLineAndTheExitCode) {
  ChildOutcome C = runWatchedChild(
      [](const EmitFn &Emit) {
        Emit("first");
        Emit("second");
        return 3;
      },
      10000);
  EXPECT_TRUE(C.Error.empty()) << C.Error;
  EXPECT_EQ(C.LastLine, "second");
  EXPECT_TRUE(C.Exited);
  EXPECT_EQ(C.ExitCode, 3);
  EXPECT_FALSE(C.Killed);
}

TEST(Subprocess, KillsASilentChild) {
  ChildOutcome C = runWatchedChild(
      [](const EmitFn &Emit) {
        Emit("started");
        sleep(30); // a hung kernel
        return 0;
      },
      300);
  EXPECT_TRUE(C.Killed);
  EXPECT_FALSE(C.Exited);
  EXPECT_EQ(C.LastLine, "started");
}

TEST(Subprocess, HeartbeatsKeepASlowChildAlive) {
  ChildOutcome C = runWatchedChild(
      [](const EmitFn &Emit) {
        for (int I = 0; I < 5; ++I) {
          usleep(150000);
          Emit("tick " + std::to_string(I));
        }
        return 0;
      },
      400);
  EXPECT_FALSE(C.Killed);
  EXPECT_EQ(C.LastLine, "tick 4");
  EXPECT_EQ(C.ExitCode, 0);
}
