// Environments with the real npm (docs/environments.md): the layer of a real project is built
// once by `npm ci --offline` from the packages scripts/prime-npm-cache put into
// $BERTH_TEST_NPM_CACHE, with no network; the agent sees node_modules, the check `npm test`
// passes, and a job that bumps a dependency in the lockfile gets its checks run on a new
// layer with the new version. Without the cache the suite is a loud skip (a failure in CI).
#include <cstdlib>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kNpmPolicy[] = R"toml(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "package.json", "package-lock.json"]
[environment]
key = ["package.json", "package-lock.json"]
setup = [["npm", "ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"]]
paths = ["node_modules"]
grants = ["cache:npm"]
[[verify]]
name = "test"
argv = ["npm", "test"]
grants = ["cache:npm"]
[[verify]]
name = "semver matches the lockfile"
argv = ["node", "-e", "require('assert').strictEqual(require('semver/package.json').version, require('./package-lock.json').packages['node_modules/semver'].version)"]
)toml";

const char* NpmCache() { return std::getenv("BERTH_TEST_NPM_CACHE"); }

class NpmEnvironmentTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kNpmPolicy; }
  void SetUp() override {
    const char* cache = NpmCache();
    REQUIRE_FEATURE(cache != nullptr && PathExists(std::string(cache) + "/_cacache"),
                    "BERTH_TEST_NPM_CACHE names no primed npm cache (scripts/prime-npm-cache)");
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    for (const char* name : {"package.json", "package-lock.json", "test.js"})
      ASSERT_TRUE(WriteText(ws() + "/" + name,
                            ReadText(std::string(NPM_FIXTURES) + "/npm_project/" + name)));
    ASSERT_TRUE(WriteText(ws() + "/.gitignore", "node_modules\n"));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "npm project"}).exit_code, 0);
    // npm writes to its cache even offline (index entries, logs), so the primed cache, which
    // may be read-only (.ci/run shares one copy with berth-ci), is copied into the cache
    // directory berth gives `cache:npm`.
    const std::string dir = state() + "/caches/npm";
    RunResult cp = RunOutside(
        {"/bin/sh", "-c", "mkdir -p \"$1\" && cp -R \"$2\"/. \"$1\"/", "sh", dir, cache});
    ASSERT_EQ(cp.exit_code, 0) << cp.Describe();
  }
};

TEST_F(NpmEnvironmentTest, NpmCiBuildsTheLayerOnceAndABumpedLockGetsItsOwnLayer) {
  // The agent sees the layer's node_modules: it records the semver it resolves.
  RunResult r = Berth({"run", "implement", "--", "sh", "-c",
                       "node -p \"require('semver/package.json').version\" > src/seen.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string first = NewestJobId();
  EXPECT_EQ(GetStr(ShowJson(first), "state"), "completed") << Logs(first);
  EXPECT_TRUE(Contains(Logs(first), "built layer")) << Logs(first);
  EXPECT_EQ(GitOut({"show", "berth/" + first + ":src/seen.txt"}), "7.5.4");
  ASSERT_EQ(Layers().size(), 1u);
  EXPECT_TRUE(PathExists(state() + "/envs/" + Layers()[0] + "/tree/node_modules/lru-cache"));

  // A second job on the same key uses the layer and builds nothing.
  r = Berth({"run", "implement", "--", "sh", "-c", "echo again > src/again.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string second = NewestJobId();
  EXPECT_EQ(GetStr(ShowJson(second), "state"), "completed") << Logs(second);
  EXPECT_FALSE(Contains(Logs(second), "built layer")) << Logs(second);
  EXPECT_EQ(Layers().size(), 1u);

  // A job that bumps semver to 7.6.0 in package.json and the lockfile: its checks run on a
  // layer built for its commit's key, where semver is 7.6.0 (the second check compares).
  const std::string bumped = std::string(NPM_FIXTURES) + "/npm_project_bumped/";
  r = Berth({"run", "implement", "--", "sh", "-c",
             "printf '%s' \"$1\" > package.json && printf '%s' \"$2\" > package-lock.json", "sh",
             ReadText(bumped + "package.json"), ReadText(bumped + "package-lock.json")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string bump = NewestJobId();
  EXPECT_EQ(GetStr(ShowJson(bump), "state"), "completed") << Logs(bump);
  EXPECT_EQ(Layers().size(), 2u);
  json receipt = ReadReceiptFile(bump);
  EXPECT_NE(GetStr(receipt, "environment.checks_key"), GetStr(receipt, "environment.key"))
      << receipt.dump(2);
  bool has_new = false;
  for (const std::string& key : Layers())
    has_new |=
        Contains(ReadText(state() + "/envs/" + key + "/tree/node_modules/semver/package.json"),
                 "\"version\": \"7.6.0\"");
  EXPECT_TRUE(has_new);
}

}  // namespace
}  // namespace berth::e2e
