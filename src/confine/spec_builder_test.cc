#include "confine/spec_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "confine/caches.h"
#include "confine/grant.h"
#include "sys/fs.h"

namespace berth::confine {
namespace {

class SpecBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sys::MakeTempDir("/tmp", "berth-spec-builder-test-").value();
    ASSERT_TRUE(sys::MakeDirs(root_ + "/home", 0700).has_value());
    ASSERT_TRUE(sys::MakeDirs(root_ + "/ws", 0700).has_value());
    host_.identity = {1000, 1000, "u", root_ + "/home"};
    host_.cwd = root_ + "/ws";
    host_.state_dir = root_ + "/state";
    host_.environ = {{"PATH", "/usr/bin:/bin"}, {"HOME", root_ + "/home"}};
    options_.argv = {"true"};
  }
  void TearDown() override {
    IgnoreError(sys::RemoveTree(root_), "a leftover temp dir harms nothing");
  }

  std::string root_;
  HostContext host_;
  SpecOptions options_;
};

const sandbox::EnvVar* FindEnv(const sandbox::SandboxSpec& spec, const std::string& name) {
  auto it = std::find_if(spec.env.begin(), spec.env.end(),
                         [&](const sandbox::EnvVar& v) { return v.name == name; });
  return it == spec.env.end() ? nullptr : &*it;
}

// The runner hands over values as they are: a value holding '=' or a newline is no
// NAME=VALUE text to split again.
TEST_F(SpecBuilderTest, TypedVariablesKeepTheirValueAndOrigin) {
  options_.env = {{"PROMPT", "a=b\nc", "--setenv"}, {"X", "", "--setenv"}};
  sandbox::SandboxSpec spec = BuildSandboxSpec(options_, host_).value();
  ASSERT_NE(FindEnv(spec, "PROMPT"), nullptr);
  EXPECT_EQ(FindEnv(spec, "PROMPT")->value, "a=b\nc");
  EXPECT_EQ(FindEnv(spec, "PROMPT")->origin, "--setenv");
  ASSERT_NE(FindEnv(spec, "X"), nullptr);
  EXPECT_EQ(FindEnv(spec, "X")->value, "");
}

// Every cache grant's variables reach the sandbox (agents have no credential filter) and are
// recognised as the grant's own, which the checks' credential filter keeps
// (job/verify: GrantVariableIsNeverACredentialRegression).
TEST_F(SpecBuilderTest, CacheGrantVariablesAreTheGrantsOwn) {
  for (const CacheTool& tool : CacheTools()) {
    options_.grants = {ParseGrant(std::string("cache:") + tool.name).value()};
    options_.env = {{"NPM_TOKEN", "secret", "--setenv"}};
    sandbox::SandboxSpec spec = BuildSandboxSpec(options_, host_).value();
    for (const auto& [name, value_template] : tool.env) {
      const sandbox::EnvVar* var = FindEnv(spec, name);
      ASSERT_NE(var, nullptr) << tool.name << " " << name;
      EXPECT_EQ(var->value,
                CacheVariableValue(value_template, host_.state_dir + "/caches/" + tool.name));
      EXPECT_TRUE(IsCacheGrantVariable(*var, spec)) << name;
    }
    ASSERT_NE(FindEnv(spec, "NPM_TOKEN"), nullptr);
    EXPECT_FALSE(IsCacheGrantVariable(*FindEnv(spec, "NPM_TOKEN"), spec));
  }
}

TEST_F(SpecBuilderTest, RefusesAVariableWithoutAName) {
  options_.env = {{"", "v", "--setenv"}};
  EXPECT_FALSE(BuildSandboxSpec(options_, host_).has_value());
  options_.env = {{"A=B", "v", "--setenv"}};
  EXPECT_FALSE(BuildSandboxSpec(options_, host_).has_value());
}

// A provider's endpoints arrive as typed patterns and join the net: grants' once each.
TEST_F(SpecBuilderTest, HostPatternsJoinTheNetGrantsOnce) {
  options_.grants = ParseGrants({"net:api.example.com"}).value();
  options_.net_allow = {net::ParseHostPattern("API.example.com:443").value(),
                        net::ParseHostPattern("*.example.org:8080").value()};
  sandbox::SandboxSpec spec = BuildSandboxSpec(options_, host_).value();
  EXPECT_EQ(spec.network, sandbox::Network::kProxy);
  EXPECT_EQ(net::ToStrings(spec.net_allow),
            (std::vector<std::string>{"api.example.com", "*.example.org:8080"}));
  EXPECT_EQ(spec.ToJson()["net_allow"], nlohmann::json({"api.example.com", "*.example.org:8080"}));
}

TEST_F(SpecBuilderTest, TypedProfileNetworkAndTimeout) {
  options_.profile = sandbox::Profile::kReadOnly;
  options_.network = sandbox::Network::kProxy;
  options_.timeout_ms = 45000;
  sandbox::SandboxSpec spec = BuildSandboxSpec(options_, host_).value();
  EXPECT_EQ(spec.profile, sandbox::Profile::kReadOnly);
  EXPECT_EQ(spec.network, sandbox::Network::kProxy);
  EXPECT_EQ(spec.timeout_ms, 45000);
  ASSERT_FALSE(spec.paths.empty());
  EXPECT_EQ(spec.paths[0].access, sandbox::PathGrant::Access::kReadOnly);
  options_.network = sandbox::Network::kNone;
  options_.net_allow = {net::ParseHostPattern("example.com").value()};
  EXPECT_FALSE(BuildSandboxSpec(options_, host_).has_value()) << "hosts need the proxy";
}

TEST_F(SpecBuilderTest, GrantsParseToTheirKind) {
  EXPECT_EQ(ParseGrant("docker").value().kind, Grant::Kind::kDocker);
  EXPECT_EQ(ParseGrant("cache:npm").value().arg, "npm");
  EXPECT_EQ(ParseGrant("net:*.example.com:8080").value().host.ToString(), "*.example.com:8080");
  EXPECT_FALSE(ParseGrant("cache:nope").has_value());
  EXPECT_FALSE(ParseGrant("write:").has_value());
  EXPECT_FALSE(ParseGrant("teleport").has_value());
}

}  // namespace
}  // namespace berth::confine
