// The bug classes `wsv explain` names: each has its check's name, which leads back to it (a
// solver's race is diagnosed by the check name its trace carries), and a fix of its own.
#include "wsv/analyzer/WaitFor.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace wsv::analyzer;

TEST(BugClassTest, EachCheckNameLeadsBackToItsClassWithAFixOfItsOwn) {
  std::set<std::string> Names, Fixes;
  for (unsigned C = 0; C < static_cast<unsigned>(BugClass::Unclassified); ++C) {
    BugClass Class = static_cast<BugClass>(C);
    std::string Name = checkName(Class);
    EXPECT_FALSE(Name.empty()) << C;
    EXPECT_EQ(bugClassOf(Name), Class) << Name;
    EXPECT_TRUE(Names.insert(Name).second) << Name << " names two classes";
    EXPECT_TRUE(Fixes.insert(fixAdvice(Class)).second) << Name << " shares its fix";
  }
  EXPECT_EQ(bugClassOf("accumulator-early-read"), BugClass::AccumulatorEarlyRead);
  EXPECT_EQ(bugClassOf(""), BugClass::Unclassified);
  EXPECT_EQ(bugClassOf("no-such-check"), BugClass::Unclassified);
}
