#include "sandbox/launcher.h"

#include <gtest/gtest.h>

namespace berth::sandbox {
namespace {

Error Failed(LaunchFailure failure) {
  Error e(Cause::kUnavailable, "the namespaces tier is unavailable: clone3: EPERM");
  e.WithDetail(static_cast<int>(failure));
  return e;
}

TEST(LaunchFailureOf, ReadsTheTypeNotTheMessage) {
  EXPECT_EQ(LaunchFailureOf(Error(Cause::kNotFound, "cannot run 'x'")), LaunchFailure::kOther);
  EXPECT_EQ(LaunchFailureOf(Error(Cause::kUnavailable, "sandbox step 'y' failed")),
            LaunchFailure::kOther);
  Error tagged(Cause::kSystem, "anything at all");
  tagged.WithDetail(static_cast<int>(LaunchFailure::kCommandNotFound));
  tagged.AddContext("running the agent");
  EXPECT_EQ(LaunchFailureOf(tagged), LaunchFailure::kCommandNotFound);
  Error unknown(Cause::kSystem, "a detail from elsewhere");
  unknown.WithDetail(9999);
  EXPECT_EQ(LaunchFailureOf(unknown), LaunchFailure::kOther);
}

TEST(FallbackSpec, OnlyTierAutoWithAllowWeakerFallsBackToLandlock) {
  SandboxSpec spec;
  spec.tier = Tier::kAuto;
  spec.allow_weaker = true;
  std::optional<SandboxSpec> weaker = FallbackSpec(spec, Failed(LaunchFailure::kTierUnavailable));
  ASSERT_TRUE(weaker.has_value());
  EXPECT_EQ(weaker->tier, Tier::kLandlock);
  // The landlock tier itself never falls back again.
  EXPECT_FALSE(FallbackSpec(*weaker, Failed(LaunchFailure::kTierUnavailable)).has_value());

  spec.allow_weaker = false;
  EXPECT_FALSE(FallbackSpec(spec, Failed(LaunchFailure::kTierUnavailable)).has_value());
  spec.allow_weaker = true;
  spec.tier = Tier::kNamespaces;
  EXPECT_FALSE(FallbackSpec(spec, Failed(LaunchFailure::kTierUnavailable)).has_value());
  spec.tier = Tier::kAuto;
  for (LaunchFailure other : {LaunchFailure::kOther, LaunchFailure::kSandboxStep,
                              LaunchFailure::kCommandNotFound, LaunchFailure::kCommandNotRunnable})
    EXPECT_FALSE(FallbackSpec(spec, Failed(other)).has_value());
}

}  // namespace
}  // namespace berth::sandbox
