#include "policy/starter.h"

#include <gtest/gtest.h>

#include <fstream>

#include "policy/policy.h"
#include "sys/fs.h"

namespace berth::policy {
namespace {

class StarterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir(::testing::TempDir(), "starter_test");
    ASSERT_TRUE(dir.has_value()) << dir.error().ToString();
    root_ = *dir;
  }
  void TearDown() override { (void)sys::RemoveTree(root_); }
  void File(const std::string& name, const std::string& text = "") {
    std::ofstream(root_ + "/" + name) << text;
  }
  void Dir(const std::string& name) {
    ASSERT_TRUE(sys::MakeDirs(root_ + "/" + name, 0755).has_value());
  }

  // The starter for this repository, parsed.
  Policy Starter() {
    std::string text = StarterPolicy(DetectRepo(root_));
    Result<Policy> policy = ParsePolicy(text, "starter.toml");
    EXPECT_TRUE(policy.has_value()) << policy.error().ToString() << "\n" << text;
    return policy.value_or(Policy{});
  }

  std::string root_;
};

std::vector<std::string> Names(const Policy& policy) {
  std::vector<std::string> names;
  for (const Check& check : policy.verify) names.push_back(check.name);
  return names;
}

TEST_F(StarterTest, EmptyRepository) {
  RepoFacts facts = DetectRepo(root_);
  EXPECT_TRUE(facts.build_systems.empty());
  EXPECT_TRUE(facts.source_globs.empty());
  EXPECT_TRUE(facts.test_globs.empty());
  Policy policy = Starter();
  ASSERT_EQ(policy.agents.size(), 2u);
  const Agent& implement = policy.agents.at("implement");
  EXPECT_EQ(implement.capability, Capability::kWrite);
  EXPECT_EQ(implement.provider, "command");
  EXPECT_EQ(implement.writable.patterns(), (std::vector<std::string>{"src/**", "tests/**"}));
  EXPECT_EQ(policy.agents.at("explore").capability, Capability::kRead);
  EXPECT_TRUE(policy.verify.empty());
  EXPECT_NE(StarterPolicy(facts).find("No build system was recognised"), std::string::npos);
}

TEST_F(StarterTest, DefaultsMatchTheBuiltInDefaults) {
  Policy policy = Starter();
  Defaults expected;
  EXPECT_EQ(policy.defaults.max_concurrent_jobs, expected.max_concurrent_jobs);
  EXPECT_EQ(policy.defaults.deadline_ms, expected.deadline_ms);
  EXPECT_EQ(policy.defaults.output_limit_bytes, expected.output_limit_bytes);
  EXPECT_EQ(policy.defaults.network, expected.network);
  EXPECT_EQ(policy.defaults.workspace, expected.workspace);
  EXPECT_EQ(policy.defaults.branch_template, expected.branch_template);
  EXPECT_EQ(policy.defaults.max_depth, expected.max_depth);
}

TEST_F(StarterTest, CMakeWithSourcesAndTests) {
  File("CMakeLists.txt", "project(x)\n");
  Dir("src");
  Dir("include");
  Dir("tests");
  File("lib");  // a file, not a directory: ignored
  RepoFacts facts = DetectRepo(root_);
  EXPECT_EQ(facts.build_systems, (std::vector<std::string>{"cmake"}));
  EXPECT_EQ(facts.source_globs, (std::vector<std::string>{"src/**", "include/**"}));
  EXPECT_EQ(facts.test_globs, (std::vector<std::string>{"tests/**"}));
  Policy policy = Starter();
  EXPECT_EQ(Names(policy), (std::vector<std::string>{"cmake-configure", "cmake-build", "ctest"}));
  EXPECT_EQ(policy.verify[0].argv, (std::vector<std::string>{"cmake", "-S", ".", "-B", "build"}));
  EXPECT_EQ(policy.agents.at("implement").writable.patterns(),
            (std::vector<std::string>{"src/**", "include/**", "tests/**"}));
}

TEST_F(StarterTest, MakefileWithAndWithoutTestTarget) {
  File("Makefile", "all:\n\tcc x.c\nTESTS := a\n.PHONY: test\n");
  EXPECT_FALSE(DetectRepo(root_).make_has_test_target);
  EXPECT_EQ(Starter().verify.at(0).argv, (std::vector<std::string>{"make"}));
  File("Makefile", "all:\n\tcc x.c\ncheck test: all\n\t./run\n");
  EXPECT_TRUE(DetectRepo(root_).make_has_test_target);
  Policy policy = Starter();
  EXPECT_EQ(Names(policy), (std::vector<std::string>{"make-test"}));
  EXPECT_EQ(policy.verify.at(0).argv, (std::vector<std::string>{"make", "test"}));
}

TEST_F(StarterTest, MakefileNextToCMakeIsOfferedCommentedOut) {
  File("CMakeLists.txt");
  File("Makefile", "test:\n\tctest\n");
  RepoFacts facts = DetectRepo(root_);
  EXPECT_EQ(facts.build_systems, (std::vector<std::string>{"cmake", "make"}));
  EXPECT_EQ(Names(Starter()),
            (std::vector<std::string>{"cmake-configure", "cmake-build", "ctest"}));
  EXPECT_NE(StarterPolicy(facts).find("# argv = [\"make\", \"test\"]"), std::string::npos);
}

TEST_F(StarterTest, JavaScriptPackageManagerByLockfile) {
  File("package.json", "{}");
  EXPECT_EQ(DetectRepo(root_).build_systems, (std::vector<std::string>{"npm"}));
  Policy npm = Starter();
  EXPECT_EQ(npm.verify.at(0).argv, (std::vector<std::string>{"npm", "test"}));
  EXPECT_EQ(npm.verify.at(0).grants, (std::vector<std::string>{"cache:npm"}));
  File("yarn.lock");
  EXPECT_EQ(DetectRepo(root_).build_systems, (std::vector<std::string>{"yarn"}));
  EXPECT_EQ(Starter().verify.at(0).argv, (std::vector<std::string>{"yarn", "test"}));
  File("pnpm-lock.yaml");
  EXPECT_EQ(DetectRepo(root_).build_systems, (std::vector<std::string>{"pnpm"}));
  EXPECT_EQ(Starter().verify.at(0).argv, (std::vector<std::string>{"pnpm", "test"}));
}

TEST_F(StarterTest, CargoGoAndPytest) {
  File("Cargo.toml");
  File("go.mod");
  File("pyproject.toml", "[tool.pytest.ini_options]\n");
  Dir("cmd");
  Dir("internal");
  Dir("test");
  Dir("__tests__");
  RepoFacts facts = DetectRepo(root_);
  EXPECT_EQ(facts.build_systems, (std::vector<std::string>{"cargo", "go", "pytest"}));
  EXPECT_EQ(facts.source_globs, (std::vector<std::string>{"cmd/**", "internal/**"}));
  EXPECT_EQ(facts.test_globs, (std::vector<std::string>{"test/**", "__tests__/**"}));
  Policy policy = Starter();
  EXPECT_EQ(Names(policy), (std::vector<std::string>{"cargo-test", "go-test", "pytest"}));
  EXPECT_EQ(policy.verify[1].argv, (std::vector<std::string>{"go", "test", "./..."}));
  EXPECT_EQ(policy.verify[2].argv, (std::vector<std::string>{"python3", "-m", "pytest", "-q"}));
}

TEST_F(StarterTest, PytestMarkers) {
  File("pyproject.toml", "[project]\nname = \"x\"\n");
  EXPECT_TRUE(DetectRepo(root_).build_systems.empty());
  File("conftest.py");
  EXPECT_EQ(DetectRepo(root_).build_systems, (std::vector<std::string>{"pytest"}));
}

TEST(StarterPolicy, EveryShapeParses) {
  const std::vector<std::string> systems = {"cmake", "make",  "npm", "pnpm",
                                            "yarn",  "cargo", "go",  "pytest"};
  // Every subset of build systems, with and without directories.
  for (unsigned mask = 0; mask < (1u << systems.size()); ++mask) {
    RepoFacts facts;
    for (size_t i = 0; i < systems.size(); ++i) {
      if (mask & (1u << i)) facts.build_systems.push_back(systems[i]);
    }
    facts.make_has_test_target = mask & 1;
    if (mask & 2) facts.source_globs = {"lib/**", "app/**", "pkg/**"};
    if (mask & 4) facts.test_globs = {"spec/**"};
    std::string text = StarterPolicy(facts);
    Result<Policy> policy = ParsePolicy(text, "starter.toml");
    ASSERT_TRUE(policy.has_value()) << policy.error().ToString() << "\n" << text;
  }
}

TEST(StarterPolicy, IsCommented) {
  std::string text = StarterPolicy(RepoFacts{});
  for (const char* expected : {"# argv = [\"./scripts/agent.sh\"]", "# \"!src/generated/**\"",
                               "# [env]", "# [include]", "# [landing]", "docs/policy.md"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  }
}

}  // namespace
}  // namespace berth::policy
