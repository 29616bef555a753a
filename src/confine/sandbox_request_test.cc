#include "confine/sandbox_request.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "confine/home.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::confine {
namespace {

using sandbox::EnvVar;
using sandbox::Network;
using sandbox::PathGrant;
using sandbox::SandboxSpec;

class BuildSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sys::MakeTempDir("/tmp", "berth-request-test-").value();
    ASSERT_TRUE(sys::MakeDirs(root_ + "/home/.ssh", 0700).has_value());
    ASSERT_TRUE(sys::MakeDirs(root_ + "/ws", 0700).has_value());
    host_.identity = {1000, 1000, "u", root_ + "/home"};
    host_.cwd = root_ + "/ws";
    host_.state_dir = root_ + "/state";
    host_.environ = {{"PATH", "/usr/bin:/bin"},
                     {"HOME", root_ + "/home"},
                     {"GITHUB_TOKEN", "secret"},
                     {"LC_ALL", "C"},
                     {"MY_VAR", "v"}};
    request_.argv = {"true"};
  }
  void TearDown() override {
    IgnoreError(sys::RemoveTree(root_), "a leftover temp dir harms nothing");
  }

  std::string root_;
  HostContext host_;
  SandboxRequest request_;
};

const EnvVar* FindEnv(const SandboxSpec& spec, const std::string& name) {
  auto it = std::find_if(spec.env.begin(), spec.env.end(),
                         [&](const EnvVar& v) { return v.name == name; });
  return it == spec.env.end() ? nullptr : &*it;
}

TEST_F(BuildSpecTest, EnvironmentIsAnAllowlist) {
  request_.env_names = {"MY_VAR"};
  request_.setenv = {"X=1"};
  SandboxSpec spec = BuildSpec(request_, host_).value();
  EXPECT_EQ(FindEnv(spec, "GITHUB_TOKEN"), nullptr);
  ASSERT_NE(FindEnv(spec, "LC_ALL"), nullptr);
  ASSERT_NE(FindEnv(spec, "MY_VAR"), nullptr);
  EXPECT_EQ(FindEnv(spec, "X")->value, "1");
  EXPECT_EQ(FindEnv(spec, "TMPDIR")->value, "/tmp");
}

TEST_F(BuildSpecTest, HidesCredentialsUnlessReadGranted) {
  SandboxSpec spec = BuildSpec(request_, host_).value();
  auto hidden = [&](const SandboxSpec& s, const std::string& p) {
    return std::find(s.hidden_paths.begin(), s.hidden_paths.end(), p) != s.hidden_paths.end();
  };
  EXPECT_TRUE(hidden(spec, root_ + "/home/.ssh"));
  EXPECT_TRUE(hidden(spec, root_ + "/home/.aws"));
  request_.reads = {"~/.ssh"};
  SandboxSpec unhidden = BuildSpec(request_, host_).value();
  EXPECT_FALSE(hidden(unhidden, root_ + "/home/.ssh"));
  EXPECT_TRUE(hidden(unhidden, root_ + "/home/.aws"));
}

TEST_F(BuildSpecTest, CacheGrantSetsToolVariable) {
  request_.grants = {"cache:npm", "cache:go"};
  SandboxSpec spec = BuildSpec(request_, host_).value();
  EXPECT_EQ(FindEnv(spec, "npm_config_cache")->value, root_ + "/state/caches/npm");
  EXPECT_EQ(FindEnv(spec, "GOMODCACHE")->value, root_ + "/state/caches/go/mod");
}

TEST_F(BuildSpecTest, RejectsBadRequests) {
  auto fails = [&](SandboxRequest r) { return !BuildSpec(r, host_).has_value(); };
  SandboxRequest r = request_;
  r.grants = {"cache:nope"};
  EXPECT_TRUE(fails(r));
  r = request_;
  r.grants = {"teleport"};
  EXPECT_TRUE(fails(r));
  r = request_;
  r.writes = {root_ + "/missing"};
  EXPECT_TRUE(fails(r));
  r = request_;
  r.writes = {"/"};
  EXPECT_TRUE(fails(r));
  r = request_;
  r.profile = "full";
  EXPECT_TRUE(fails(r));  // needs --full-access
  r = request_;
  r.network = "open";
  EXPECT_TRUE(fails(r));  // only with full
  r = request_;
  r.memory = "lots";
  EXPECT_TRUE(fails(r));
  r = request_;
  r.workspace = root_ + "/home/.ssh";
  EXPECT_TRUE(fails(r));  // inside a hidden path
  r = request_;
  r.argv.clear();
  EXPECT_TRUE(fails(r));
}

TEST_F(BuildSpecTest, NetGrantSwitchesTheNetworkToTheProxy) {
  EXPECT_EQ(BuildSpec(request_, host_).value().network, Network::kNone);
  request_.grants = {"net:API.example.com", "net:*.example.org:8080", "net:api.example.com:443"};
  SandboxSpec spec = BuildSpec(request_, host_).value();
  EXPECT_EQ(spec.network, Network::kProxy);
  EXPECT_EQ(net::ToStrings(spec.net_allow),
            (std::vector<std::string>{"api.example.com", "*.example.org:8080"}));
  EXPECT_EQ(FindEnv(spec, "HTTPS_PROXY")->value, "http://127.0.0.1:3128");
  EXPECT_EQ(FindEnv(spec, "http_proxy")->value, "http://127.0.0.1:3128");
  EXPECT_EQ(FindEnv(spec, "ALL_PROXY")->origin, "proxy");
  EXPECT_EQ(FindEnv(spec, "NO_PROXY")->value, "localhost,127.0.0.1,::1");
  EXPECT_EQ(FindEnv(spec, "no_proxy")->value, "localhost,127.0.0.1,::1");
  nlohmann::json json = spec.ToJson();
  EXPECT_EQ(json["network"], "proxy");
  EXPECT_EQ(json["net_allow"][1], "*.example.org:8080");

  // --setenv cannot point clients elsewhere.
  request_.setenv = {"HTTPS_PROXY=http://elsewhere:1"};
  EXPECT_EQ(FindEnv(BuildSpec(request_, host_).value(), "HTTPS_PROXY")->value,
            "http://127.0.0.1:3128");
}

TEST_F(BuildSpecTest, NetworkModesStayConsistent) {
  SandboxRequest r = request_;
  r.network = "proxy";  // a proxy that allows nothing is a valid way to watch what is asked
  EXPECT_EQ(BuildSpec(r, host_).value().network, Network::kProxy);
  EXPECT_EQ(FindEnv(BuildSpec(r, host_).value(), "HTTP_PROXY")->value, "http://127.0.0.1:3128");
  r = request_;
  r.network = "none";
  EXPECT_EQ(FindEnv(BuildSpec(r, host_).value(), "HTTP_PROXY"), nullptr);
  r.grants = {"net:example.com"};
  EXPECT_FALSE(BuildSpec(r, host_).has_value()) << "net: grants with --network none";
  r.network = "open";
  r.profile = "full";
  r.full_access = true;
  EXPECT_FALSE(BuildSpec(r, host_).has_value()) << "net: grants with --network open";
  r.grants.clear();
  EXPECT_TRUE(BuildSpec(r, host_).has_value());
  r.network = "proxy";
  EXPECT_FALSE(BuildSpec(r, host_).has_value()) << "the proxy cannot bind the full profile";
  r = request_;
  r.grants = {"net:exa mple.com"};
  Result<SandboxSpec> bad = BuildSpec(r, host_);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().cause(), Cause::kInvalidArgument);
  r.grants = {"net:"};
  EXPECT_FALSE(BuildSpec(r, host_).has_value());
}

TEST_F(BuildSpecTest, ReadOnlyProfileMountsWorkspaceReadOnly) {
  request_.profile = "read-only";
  SandboxSpec spec = BuildSpec(request_, host_).value();
  ASSERT_FALSE(spec.paths.empty());
  EXPECT_EQ(spec.paths[0].access, PathGrant::Access::kReadOnly);
  EXPECT_EQ(spec.paths[0].path, root_ + "/ws");
}

TEST_F(BuildSpecTest, SpecJsonNeverShowsPassedValues) {
  request_.env_names = {"MY_VAR"};
  SandboxSpec spec = BuildSpec(request_, host_).value();
  std::string json = spec.ToJson().dump();
  EXPECT_EQ(json.find("\"v\""), std::string::npos);
  EXPECT_NE(json.find("MY_VAR"), std::string::npos);
}

const PathGrant* FindPath(const SandboxSpec& spec, const std::string& path) {
  auto it = std::find_if(spec.paths.begin(), spec.paths.end(),
                         [&](const PathGrant& p) { return p.path == path; });
  return it == spec.paths.end() ? nullptr : &*it;
}

TEST_F(BuildSpecTest, HomeIsPrivateWithTheAllowlistReadOnly) {
  const std::string home = root_ + "/home";
  ASSERT_TRUE(sys::MakeDirs(home + "/.cargo/bin", 0755).has_value());
  ASSERT_TRUE(sys::MakeDirs(home + "/notes", 0755).has_value());
  ASSERT_TRUE(sys::MakeDirs(root_ + "/dotfiles", 0755).has_value());
  ASSERT_TRUE(sys::WriteFileAtomic(root_ + "/dotfiles/gitconfig", "[user]\n").has_value());
  ASSERT_EQ(::symlink("../dotfiles/gitconfig", (home + "/.gitconfig").c_str()), 0);
  SandboxSpec spec = BuildSpec(request_, host_).value();
  EXPECT_EQ(spec.private_home, home);
  const PathGrant* cargo = FindPath(spec, home + "/.cargo/bin");
  ASSERT_NE(cargo, nullptr);
  EXPECT_EQ(cargo->access, PathGrant::Access::kReadOnly);
  // A symlinked dotfile shows what it points to, at its usual place.
  const PathGrant* gitconfig = FindPath(spec, home + "/.gitconfig");
  ASSERT_NE(gitconfig, nullptr);
  EXPECT_EQ(gitconfig->host_path(), root_ + "/dotfiles/gitconfig");
  EXPECT_EQ(FindPath(spec, home + "/notes"), nullptr);
  EXPECT_EQ(FindPath(spec, home + "/.rustup"), nullptr) << "missing entries are left out";

  // The user's config extends the list; read: grants show a path too.
  host_.home_allow = {"~/notes"};
  EXPECT_NE(FindPath(BuildSpec(request_, host_).value(), home + "/notes"), nullptr);
  host_.home_allow.clear();
  request_.reads = {"~/notes"};
  EXPECT_NE(FindPath(BuildSpec(request_, host_).value(), home + "/notes"), nullptr);
  EXPECT_EQ(HomeAllowlistBinds(host_).size(), 2u);
}

TEST_F(BuildSpecTest, HomeThatIsTheWorkspaceStaysTheWorkspace) {
  request_.workspace = root_ + "/home";
  EXPECT_EQ(BuildSpec(request_, host_).value().private_home, "");
  request_.workspace = root_ + "/ws";
  request_.profile = "full";
  request_.full_access = true;
  EXPECT_EQ(BuildSpec(request_, host_).value().private_home, "");
}

}  // namespace
}  // namespace berth::confine
