#include "policy/starter.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

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
    root_ = sys::RealPath(*dir).value_or(*dir);
  }
  void TearDown() override { (void)sys::RemoveTree(root_); }
  void File(const std::string& name, const std::string& text = "") {
    std::ofstream(root_ + "/" + name) << text;
  }
  void Dir(const std::string& name) {
    ASSERT_TRUE(sys::MakeDirs(root_ + "/" + name, 0755).has_value());
  }
  // A fake interpreter at `path` (absolute) that fails `-c "import NAME"` for every name in
  // `missing` and succeeds otherwise.
  static void FakePython(const std::string& path, const std::vector<std::string>& missing) {
    ASSERT_TRUE(sys::MakeDirs(path.substr(0, path.rfind('/')), 0755).has_value());
    std::string script = "#!/bin/sh\n";
    for (const std::string& name : missing)
      script += "[ \"$2\" = \"import " + name + "\" ] && exit 1\n";
    script += "exit 0\n";
    std::ofstream(path) << script;
    ASSERT_EQ(chmod(path.c_str(), 0755), 0);
  }

  // Fake tools in a bin directory of the fixture, the only place DetectRepo looks for tools.
  void Tools(const std::vector<std::string>& names) {
    const std::string bin = root_ + "/usr/bin";
    for (const std::string& name : names) FakePython(bin + "/" + name, {});
    options_.tool_dirs = {bin};
  }

  // The starter for this repository, parsed.
  Policy Starter() { return Parsed(StarterPolicy(DetectRepo(root_, options_))); }
  static Policy Parsed(const std::string& text) {
    Result<Policy> policy = ParsePolicy(text, "starter.toml");
    EXPECT_TRUE(policy.has_value()) << policy.error().ToString() << "\n" << text;
    return policy.value_or(Policy{});
  }

  std::string root_;
  // No interpreter, home or tool of the host: tests give their own.
  DetectOptions options_{{}, {}, {}};
};

std::vector<std::string> Names(const Policy& policy) {
  std::vector<std::string> names;
  for (const Check& check : policy.verify) names.push_back(check.name);
  return names;
}

TEST_F(StarterTest, EmptyRepository) {
  RepoFacts facts = DetectRepo(root_, options_);
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
  RepoFacts facts = DetectRepo(root_, options_);
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
  EXPECT_FALSE(DetectRepo(root_, options_).make_has_test_target);
  EXPECT_EQ(Starter().verify.at(0).argv, (std::vector<std::string>{"make"}));
  File("Makefile", "all:\n\tcc x.c\ncheck test: all\n\t./run\n");
  EXPECT_TRUE(DetectRepo(root_, options_).make_has_test_target);
  Policy policy = Starter();
  EXPECT_EQ(Names(policy), (std::vector<std::string>{"make-test"}));
  EXPECT_EQ(policy.verify.at(0).argv, (std::vector<std::string>{"make", "test"}));
}

TEST_F(StarterTest, MakefileNextToCMakeIsOfferedCommentedOut) {
  File("CMakeLists.txt");
  File("Makefile", "test:\n\tctest\n");
  RepoFacts facts = DetectRepo(root_, options_);
  EXPECT_EQ(facts.build_systems, (std::vector<std::string>{"cmake", "make"}));
  EXPECT_EQ(Names(Starter()),
            (std::vector<std::string>{"cmake-configure", "cmake-build", "ctest"}));
  EXPECT_NE(StarterPolicy(facts).find("# argv = [\"make\", \"test\"]"), std::string::npos);
}

TEST_F(StarterTest, JavaScriptPackageManagerByLockfile) {
  Tools({"npm", "pnpm", "yarn"});
  File("package.json", "{}");
  EXPECT_EQ(DetectRepo(root_, options_).build_systems, (std::vector<std::string>{"npm"}));
  Policy npm = Starter();
  EXPECT_EQ(npm.verify.at(0).argv, (std::vector<std::string>{"npm", "test"}));
  EXPECT_EQ(npm.verify.at(0).grants, (std::vector<std::string>{"cache:npm"}));
  File("yarn.lock", "# yarn lockfile v1\n");
  EXPECT_EQ(DetectRepo(root_, options_).build_systems, (std::vector<std::string>{"yarn"}));
  EXPECT_EQ(Starter().verify.at(0).argv, (std::vector<std::string>{"yarn", "test"}));
  File("pnpm-lock.yaml");
  EXPECT_EQ(DetectRepo(root_, options_).build_systems, (std::vector<std::string>{"pnpm"}));
  EXPECT_EQ(Starter().verify.at(0).argv, (std::vector<std::string>{"pnpm", "test"}));
}

// A user had to write the express environment by hand: berth init now writes it, `npm ci`
// with the lockfile, `npm install` without one.
TEST_F(StarterTest, NpmEnvironmentWithAndWithoutLockfile) {
  Tools({"npm"});
  File("package.json", "{}");
  Policy policy = Starter();
  ASSERT_TRUE(policy.environment.has_value());
  EXPECT_EQ(policy.environment->key, (std::vector<std::string>{"package.json"}));
  EXPECT_EQ(policy.environment->setup,
            (std::vector<std::vector<std::string>>{{"npm", "install", "--no-audit", "--no-fund"}}));
  EXPECT_EQ(policy.environment->paths, (std::vector<std::string>{"node_modules"}));
  EXPECT_EQ(policy.environment->hosts, (std::vector<std::string>{"registry.npmjs.org"}));
  EXPECT_EQ(policy.environment->grants, (std::vector<std::string>{"cache:npm"}));
  File("package-lock.json", "{}");
  policy = Starter();
  ASSERT_TRUE(policy.environment.has_value());
  EXPECT_EQ(policy.environment->key,
            (std::vector<std::string>{"package.json", "package-lock.json"}));
  EXPECT_EQ(policy.environment->setup,
            (std::vector<std::vector<std::string>>{{"npm", "ci", "--no-audit", "--no-fund"}}));
  const std::string text = StarterPolicy(DetectRepo(root_, options_));
  EXPECT_NE(text.find("`berth env build`"), std::string::npos) << text;
}

TEST_F(StarterTest, PnpmAndYarnEnvironments) {
  Tools({"pnpm", "yarn"});
  File("package.json", "{}");
  File("pnpm-lock.yaml");
  Policy pnpm = Starter();
  ASSERT_TRUE(pnpm.environment.has_value());
  EXPECT_EQ(pnpm.environment->setup,
            (std::vector<std::vector<std::string>>{{"pnpm", "install", "--frozen-lockfile"}}));
  EXPECT_EQ(pnpm.environment->key, (std::vector<std::string>{"package.json", "pnpm-lock.yaml"}));
  EXPECT_EQ(pnpm.environment->paths, (std::vector<std::string>{"node_modules"}));
  ASSERT_TRUE(sys::RemoveTree(root_ + "/pnpm-lock.yaml").has_value());
  File("yarn.lock", "# yarn lockfile v1\n");
  Policy classic = Starter();
  ASSERT_TRUE(classic.environment.has_value());
  EXPECT_EQ(classic.environment->setup,
            (std::vector<std::vector<std::string>>{{"yarn", "install", "--frozen-lockfile"}}));
  EXPECT_EQ(classic.environment->hosts,
            (std::vector<std::string>{"registry.yarnpkg.com", "registry.npmjs.org"}));
  // Yarn 2+ with Plug'n'Play: no layer can hold its global cache; written as a comment only.
  File("yarn.lock", "__metadata:\n  version: 6\n");
  Policy pnp = Starter();
  EXPECT_FALSE(pnp.environment.has_value());
  EXPECT_EQ(pnp.verify.at(0).argv, (std::vector<std::string>{"yarn", "test"}));
  File(".yarnrc.yml", "nodeLinker: node-modules\n");
  Policy berry = Starter();
  ASSERT_TRUE(berry.environment.has_value());
  EXPECT_EQ(berry.environment->setup,
            (std::vector<std::vector<std::string>>{{"yarn", "install", "--immutable"}}));
}

// npm under a home (nvm) cannot run in a job: the check and the setup are written commented
// out, with the reason, and the policy has no environment.
TEST_F(StarterTest, ToolUnderAHomeIsWrittenCommentedOut) {
  Tools({"npm", "cargo", "go"});
  options_.homes = {root_ + "/usr"};
  File("package.json", "{}");
  File("package-lock.json", "{}");
  File("Cargo.toml");
  File("go.mod");
  File("go.sum");
  RepoFacts facts = DetectRepo(root_, options_);
  EXPECT_TRUE(facts.tools.empty());
  Policy policy = Starter();
  EXPECT_FALSE(policy.environment.has_value());
  EXPECT_TRUE(policy.verify.empty());
  const std::string text = StarterPolicy(facts);
  EXPECT_NE(text.find("# [[verify]]\n# name = \"npm-test\""), std::string::npos) << text;
  EXPECT_NE(text.find("npm is not installed outside a home directory"), std::string::npos);
  EXPECT_NE(text.find("setup would be [\"npm\", \"ci\""), std::string::npos) << text;
  EXPECT_NE(text.find("cargo is not installed outside a home directory"), std::string::npos);
  EXPECT_EQ(text.find(root_ + "/usr"), std::string::npos) << text;
}

TEST_F(StarterTest, CargoGoAndPytest) {
  Tools({"cargo", "go"});
  File("Cargo.toml");
  File("go.mod");
  File("pyproject.toml", "[tool.pytest.ini_options]\n");
  Dir("cmd");
  Dir("internal");
  Dir("test");
  Dir("__tests__");
  RepoFacts facts = DetectRepo(root_, options_);
  EXPECT_EQ(facts.build_systems, (std::vector<std::string>{"cargo", "go", "pytest"}));
  EXPECT_EQ(facts.source_globs, (std::vector<std::string>{"cmd/**", "internal/**"}));
  EXPECT_EQ(facts.test_globs, (std::vector<std::string>{"test/**", "__tests__/**"}));
  Policy policy = Starter();
  EXPECT_EQ(Names(policy), (std::vector<std::string>{"cargo-test", "go-test", "pytest"}));
  EXPECT_EQ(policy.verify[1].argv, (std::vector<std::string>{"go", "test", "./..."}));
  // No interpreter can import pytest: the check names /usr/bin/python3 and says so.
  EXPECT_EQ(policy.verify[2].argv,
            (std::vector<std::string>{"/usr/bin/python3", "-m", "pytest", "-q"}));
  EXPECT_NE(StarterPolicy(facts).find("# pytest is missing"), std::string::npos);
}

// cargo and go keep their dependencies in a cache the layer cannot hold; the starter vendors
// them into the layer instead (target/vendor, vendor/), and checks read them offline.
TEST_F(StarterTest, CargoAndGoVendorIntoTheLayer) {
  Tools({"cargo", "go"});
  File("Cargo.toml");
  File("Cargo.lock");
  File("go.mod");
  File("go.sum");
  Policy policy = Starter();
  ASSERT_TRUE(policy.environment.has_value());
  EXPECT_EQ(policy.environment->setup,
            (std::vector<std::vector<std::string>>{{"cargo", "vendor", "--locked", "target/vendor"},
                                                   {"go", "mod", "vendor"}}));
  EXPECT_EQ(policy.environment->paths, (std::vector<std::string>{"target/vendor", "vendor"}));
  EXPECT_EQ(policy.environment->key,
            (std::vector<std::string>{"**/Cargo.toml", "Cargo.lock", "rust-toolchain.toml",
                                      "go.mod", "go.sum"}));
  EXPECT_EQ(policy.environment->grants, (std::vector<std::string>{"cache:cargo", "cache:go"}));
  EXPECT_EQ(
      policy.verify.at(0).argv,
      (std::vector<std::string>{"cargo", "test", "--offline", "--config",
                                "source.crates-io.replace-with=\"vendored-sources\"", "--config",
                                "source.vendored-sources.directory=\"target/vendor\""}));
  // Without Cargo.lock, vendor resolves (no --locked); a module without go.sum fetches nothing.
  ASSERT_TRUE(sys::RemoveTree(root_ + "/Cargo.lock").has_value());
  ASSERT_TRUE(sys::RemoveTree(root_ + "/go.sum").has_value());
  policy = Starter();
  ASSERT_TRUE(policy.environment.has_value());
  EXPECT_EQ(policy.environment->setup,
            (std::vector<std::vector<std::string>>{{"cargo", "vendor", "target/vendor"}}));
  // A tree that vendors its dependencies itself needs no environment.
  Dir("vendor");
  policy = Starter();
  EXPECT_FALSE(policy.environment.has_value());
  EXPECT_EQ(policy.verify.at(0).argv, (std::vector<std::string>{"cargo", "test", "--offline"}));
}

// berth init ran the first python3 on PATH, a pyenv shim under a home; every home is hidden
// in a job. An interpreter under a home is never written, even when it has pytest.
TEST_F(StarterTest, PythonNeverUnderAHomeRegression) {
  File("pytest.ini");
  const std::string home = root_ + "/home/dev";
  const std::string shim = home + "/.pyenv/shims/python3";
  const std::string system = root_ + "/usr/bin/python3";
  // No interpreter can make a venv (no python3-venv): the check runs one as found.
  FakePython(shim, {"ensurepip"});
  FakePython(system, {"ensurepip"});
  options_.homes = {home};
  options_.python_candidates = {shim, system};
  RepoFacts facts = DetectRepo(root_, options_);
  EXPECT_EQ(facts.python, system);
  EXPECT_TRUE(facts.python_has_pytest);
  EXPECT_TRUE(facts.python_env.empty());
  std::string text = StarterPolicy(facts);
  EXPECT_EQ(text.find(home), std::string::npos) << text;
  EXPECT_EQ(Parsed(text).verify.at(0).argv,
            (std::vector<std::string>{system, "-m", "pytest", "-q"}));
  EXPECT_EQ(text.find("pytest is missing"), std::string::npos);
  // The first candidate without pytest is passed over for one that has it.
  FakePython(system, {"pytest", "ensurepip"});
  const std::string local = root_ + "/usr/local/bin/python3";
  FakePython(local, {"ensurepip"});
  options_.python_candidates = {shim, system, local};
  EXPECT_EQ(DetectRepo(root_, options_).python, local);
  // With venv: the venv is made from an interpreter outside the home, never the shim.
  FakePython(shim, {});
  FakePython(local, {});
  facts = DetectRepo(root_, options_);
  EXPECT_EQ(facts.python_env, "venv");
  EXPECT_EQ(facts.base_python, local);
  text = StarterPolicy(facts);
  EXPECT_EQ(text.find(home), std::string::npos) << text;
  EXPECT_EQ(Parsed(text).environment->setup.at(0),
            (std::vector<std::string>{local, "-m", "venv", ".venv"}));
}

// Without an interpreter that can make a venv, the project's own venv runs the check.
TEST_F(StarterTest, ProjectVenvIsPreferred) {
  File("pyproject.toml", "[tool.pytest.ini_options]\n");
  FakePython(root_ + "/.venv/bin/python", {});
  FakePython(root_ + "/usr/bin/python3", {"ensurepip"});
  options_.python_candidates = {root_ + "/usr/bin/python3"};
  Policy policy = Starter();
  EXPECT_EQ(policy.verify.at(0).argv,
            (std::vector<std::string>{".venv/bin/python", "-m", "pytest", "-q"}));
  // A venv whose python links into a home (pyenv) cannot run in a job: the system one runs.
  const std::string home = sys::MakeTempDir(::testing::TempDir(), "starter_home").value();
  struct Remove {
    std::string dir;
    ~Remove() { (void)sys::RemoveTree(dir); }
  } remove{home};
  FakePython(home + "/.pyenv/versions/3.12/bin/python3", {});
  ASSERT_TRUE(sys::RemoveTree(root_ + "/.venv").has_value());
  Dir("venv/bin");
  ASSERT_EQ(symlink((home + "/.pyenv/versions/3.12/bin/python3").c_str(),
                    (root_ + "/venv/bin/python").c_str()),
            0);
  options_.homes = {home};
  EXPECT_EQ(DetectRepo(root_, options_).python, root_ + "/usr/bin/python3");
  options_.homes = {};
  EXPECT_EQ(DetectRepo(root_, options_).python, "venv/bin/python");
}

// pallets/click: src/click/, tests/, pytest in pyproject; without a venv the package is not
// installed in the interpreter, so the tests need PYTHONPATH=src (checks and agents: [env] set).
TEST_F(StarterTest, ClickLikeSrcLayoutSetsPythonPath) {
  File("pyproject.toml", "[project]\nname = \"click\"\n[tool.pytest.ini_options]\n");
  Dir("src/click");
  File("src/click/__init__.py");
  File("src/click/core.py");
  Dir("tests");
  File("tests/test_basic.py");
  Dir("docs");
  File("docs/conf.py");
  Dir(".github/workflows");
  File(".github/workflows/x.py");
  FakePython(root_ + "/usr/bin/python3", {"click", "ensurepip"});
  options_.python_candidates = {root_ + "/usr/bin/python3"};
  Policy policy = Starter();
  EXPECT_EQ(policy.env.set, (std::map<std::string, std::string>{{"PYTHONPATH", "src"}}));
  EXPECT_EQ(policy.verify.at(0).grants, (std::vector<std::string>{"cache:pip"}));
  EXPECT_EQ(policy.agents.at("implement").writable.patterns(),
            (std::vector<std::string>{"src/**", "docs/**", "tests/**"}));
  // Installed (e.g. an editable install in the venv): no PYTHONPATH.
  FakePython(root_ + "/usr/bin/python3", {"ensurepip"});
  EXPECT_TRUE(Starter().env.set.empty());
}

// pallets/click's tests call importlib.metadata.version("click"): PYTHONPATH=src alone is not
// enough, the project must be installed. The venv environment installs it, not editable (an
// editable install's absolute path would tie a layer, shared by every checkout with the same
// key, to the checkout that built it), and PYTHONPATH=src makes the tests import the tree's
// code rather than that installed copy, whatever the interpreter could import at init.
TEST_F(StarterTest, ClickLikeVenvEnvironmentInstallsTheProject) {
  File("pyproject.toml",
       "[project]\nname = \"click\"\n[build-system]\nrequires = [\"flit_core\"]\n"
       "[dependency-groups]\ntests = [\"pytest\"]\n[tool.pytest.ini_options]\n");
  File("requirements.txt", "colorama\n");
  File("requirements-docs.txt", "sphinx\n");
  Dir("requirements");
  File("requirements/tests.txt", "pytest==8\n");
  File("requirements/docs.txt", "sphinx\n");
  Dir("src/click");
  File("src/click/__init__.py");
  const std::string python = root_ + "/usr/bin/python3";
  FakePython(python, {});  // can import click (say, installed): PYTHONPATH is set all the same
  options_.python_candidates = {python};
  RepoFacts facts = DetectRepo(root_, options_);
  EXPECT_EQ(facts.python_env, "venv");
  EXPECT_EQ(facts.python_group, "tests");
  Policy policy = Starter();
  ASSERT_TRUE(policy.environment.has_value());
  EXPECT_EQ(policy.environment->setup,
            (std::vector<std::vector<std::string>>{
                {python, "-m", "venv", ".venv"},
                {".venv/bin/python", "-m", "pip", "install", "--disable-pip-version-check", "-r",
                 "requirements.txt", "-r", "requirements/tests.txt", ".", "pytest"}}));
  EXPECT_EQ(policy.environment->key, (std::vector<std::string>{"pyproject.toml", "requirements.txt",
                                                               "requirements/tests.txt"}));
  EXPECT_EQ(policy.environment->paths, (std::vector<std::string>{".venv"}));
  EXPECT_EQ(policy.environment->hosts,
            (std::vector<std::string>{"pypi.org", "files.pythonhosted.org"}));
  EXPECT_EQ(policy.environment->grants, (std::vector<std::string>{"cache:pip"}));
  EXPECT_EQ(policy.verify.at(0).argv,
            (std::vector<std::string>{".venv/bin/python", "-m", "pytest", "-q"}));
  EXPECT_EQ(policy.env.set, (std::map<std::string, std::string>{{"PYTHONPATH", "src"}}));
  // A tests extra is installed with the project.
  File("pyproject.toml",
       "[project]\nname = \"x\"\n[project.optional-dependencies]\ntest = [\"pytest\"]\n"
       "[tool.pytest.ini_options]\n");
  ASSERT_TRUE(sys::RemoveTree(root_ + "/src").has_value());
  policy = Starter();
  ASSERT_TRUE(policy.environment.has_value());
  EXPECT_EQ(policy.environment->setup.at(1).at(9), ".[test]");
  EXPECT_TRUE(policy.env.set.empty());  // a flat layout: the root is on sys.path
}

TEST_F(StarterTest, UvAndPoetryEnvironments) {
  Tools({"uv", "poetry"});
  const std::string python = root_ + "/usr/bin/python3";
  FakePython(python, {"ensurepip"});  // uv and poetry need no ensurepip
  options_.python_candidates = {python};
  File("pyproject.toml",
       "[project]\nname = \"x\"\n[dependency-groups]\ntest = [\"pytest\"]\n"
       "[tool.pytest.ini_options]\n");
  File("poetry.lock");
  Policy poetry = Starter();
  ASSERT_TRUE(poetry.environment.has_value());
  EXPECT_EQ(poetry.environment->setup,
            (std::vector<std::vector<std::string>>{
                {"poetry", "config", "virtualenvs.in-project", "true", "--local"},
                {"poetry", "env", "use", python},
                {"poetry", "install", "--no-interaction"}}));
  EXPECT_EQ(poetry.environment->key, (std::vector<std::string>{"pyproject.toml", "poetry.lock"}));
  File("uv.lock");
  Policy uv = Starter();
  ASSERT_TRUE(uv.environment.has_value());
  EXPECT_EQ(uv.environment->setup,
            (std::vector<std::vector<std::string>>{{"uv", "sync", "--frozen", "--no-editable",
                                                    "--python", python, "--group", "test"}}));
  EXPECT_EQ(uv.environment->key, (std::vector<std::string>{"pyproject.toml", "uv.lock"}));
  EXPECT_EQ(uv.environment->grants, (std::vector<std::string>{"cache:uv"}));
  EXPECT_EQ(uv.verify.at(0).argv,
            (std::vector<std::string>{".venv/bin/python", "-m", "pytest", "-q"}));
}

// redis/hiredis: the library's own .c/.h files sit at the top; `writable = ["tests/**"]`
// refused the most ordinary fix.
TEST_F(StarterTest, HiredisLikeTopLevelSourcesAreWritableRegression) {
  File("Makefile", "test: all\n\t./test.sh\n");
  File("CMakeLists.txt");
  for (const char* name : {"hiredis.c", "hiredis.h", "sds.c", "sds.h", "test.c", "README.md"})
    File(name);
  Dir("adapters");
  File("adapters/libev.h");
  Dir("examples");
  File("examples/example.c");
  Dir("fuzzing");
  File("fuzzing/format_command_fuzzer.c");
  Dir("build");
  File("build/generated.c");
  Dir(".github");
  File(".github/release.c");
  Policy policy = Starter();
  const GlobSet& writable = policy.agents.at("implement").writable;
  EXPECT_EQ(writable.patterns(),
            (std::vector<std::string>{"adapters/**", "examples/**", "fuzzing/**", "*.c", "*.h"}));
  for (const char* path : {"hiredis.c", "sds.h", "adapters/libev.h", "examples/example.c"})
    EXPECT_TRUE(writable.Matches(path)) << path;
  // `*` stays within the top directory; .berth, build outputs and README stay out.
  for (const char* path :
       {"build/generated.c", ".berth/policy.toml", ".berth/x.c", "README.md", ".github/release.c"})
    EXPECT_FALSE(writable.Matches(path)) << path;
}

// expressjs/express: index.js at the top, lib/ and test/, node_modules/ and benchmarks/.
TEST_F(StarterTest, ExpressLikeNpmLayout) {
  Tools({"npm"});
  File("package.json", "{\"scripts\": {\"test\": \"mocha\"}}");
  File("index.js");
  Dir("lib");
  File("lib/express.js");
  Dir("test");
  File("test/app.js");
  Dir("examples/auth");
  File("examples/auth/index.js");
  Dir("node_modules/mocha");
  File("node_modules/mocha/index.js");
  Policy policy = Starter();
  EXPECT_EQ(policy.agents.at("implement").writable.patterns(),
            (std::vector<std::string>{"lib/**", "examples/**", "*.js", "test/**"}));
  EXPECT_EQ(policy.verify.at(0).grants, (std::vector<std::string>{"cache:npm"}));
}

TEST_F(StarterTest, MavenGradleAndUvWhereTheToolIsInstalled) {
  File("pom.xml");
  File("build.gradle");
  File("uv.lock");
  File("pyproject.toml", "[tool.pytest.ini_options]\n");
  EXPECT_EQ(DetectRepo(root_, options_).build_systems, (std::vector<std::string>{"pytest"}));
  const std::string bin = root_ + "/usr/bin";
  FakePython(bin + "/mvn", {});
  FakePython(bin + "/gradle", {});
  FakePython(bin + "/uv", {});
  options_.tool_dirs = {bin};
  EXPECT_EQ(DetectRepo(root_, options_).build_systems,
            (std::vector<std::string>{"maven", "gradle", "uv", "pytest"}));
  Policy policy = Starter();
  EXPECT_EQ(Names(policy), (std::vector<std::string>{"maven-test", "gradle-test", "pytest"}));
  EXPECT_EQ(
      policy.verify[0].argv,
      (std::vector<std::string>{"mvn", "-o", "-q", "-Dmaven.repo.local=.m2/repository", "test"}));
  EXPECT_EQ(policy.verify[1].argv, (std::vector<std::string>{"gradle", "--offline", "--no-daemon",
                                                             "-g", ".gradle-home", "test"}));
  // Their dependencies live in a local repository / Gradle home inside the layer.
  ASSERT_TRUE(policy.environment.has_value());
  EXPECT_EQ(policy.environment->setup,
            (std::vector<std::vector<std::string>>{
                {"mvn", "-B", "-q", "-Dmaven.repo.local=.m2/repository", "dependency:go-offline"},
                {"gradle", "--no-daemon", "-q", "-g", ".gradle-home",
                 "--write-verification-metadata", "sha256", "help"}}));
  EXPECT_EQ(policy.environment->paths, (std::vector<std::string>{".m2", ".gradle-home"}));
  EXPECT_EQ(policy.verify[2].argv,
            (std::vector<std::string>{"uv", "run", "--frozen", "--offline", "pytest", "-q"}));
  EXPECT_EQ(policy.verify[2].grants, (std::vector<std::string>{"cache:uv"}));
  // The Gradle wrapper wins; a uv project's own .venv runs pytest directly.
  File("gradlew");
  FakePython(root_ + "/.venv/bin/python", {});
  policy = Starter();
  EXPECT_EQ(policy.verify[1].argv.at(0), "./gradlew");
  EXPECT_EQ(policy.verify[2].argv,
            (std::vector<std::string>{".venv/bin/python", "-m", "pytest", "-q"}));
  // A tool under a home is not installed as far as a job can tell.
  options_.homes = {root_ + "/usr"};
  EXPECT_EQ(DetectRepo(root_, options_).build_systems,
            (std::vector<std::string>{"gradle", "pytest"}));
}

TEST_F(StarterTest, PytestMarkers) {
  File("pyproject.toml", "[project]\nname = \"x\"\n");
  EXPECT_TRUE(DetectRepo(root_, options_).build_systems.empty());
  File("conftest.py");
  EXPECT_EQ(DetectRepo(root_, options_).build_systems, (std::vector<std::string>{"pytest"}));
}

TEST(StarterPolicy, EveryShapeParses) {
  const std::vector<std::string> systems = {"cmake", "make", "npm",   "pnpm",   "yarn",   "cargo",
                                            "go",    "uv",   "maven", "gradle", "pytest", "poetry"};
  const std::vector<std::string> all_tools = {"npm", "pnpm",   "yarn", "cargo", "go",
                                              "mvn", "gradle", "uv",   "poetry"};
  // Every subset of build systems, with and without directories, tools and environments.
  for (unsigned mask = 0; mask < (1u << systems.size()); ++mask) {
    // Two of the eight tool/environment variants per subset (all eight: a minute).
    for (unsigned variant : {mask & 7u, (mask >> 3 ^ mask >> 6 ^ 7u) & 7u}) {
      RepoFacts facts;
      for (size_t i = 0; i < systems.size(); ++i) {
        if (mask & (1u << i)) facts.build_systems.push_back(systems[i]);
      }
      facts.make_has_test_target = mask & 1;
      if (mask & 2) facts.source_globs = {"lib/**", "app/**", "pkg/**"};
      if (mask & 4) facts.test_globs = {"spec/**"};
      if (mask & 8) facts.source_globs.insert(facts.source_globs.end(), {"*.c", "*.h"});
      facts.python_src_layout = mask & 16;
      facts.python_has_pytest = mask & 32;
      facts.gradle_wrapper = mask & 64;
      facts.python = (mask & 128) ? ".venv/bin/python" : "/usr/bin/python3";
      // The environment's facts.
      if (variant & 1) facts.tools = all_tools;
      facts.python_env = std::vector<std::string>{"", "venv", "uv", "poetry"}[variant >> 1];
      facts.base_python = (mask & 256) ? "/usr/bin/python3" : "";
      facts.npm_lockfile = (mask & 512) ? "package-lock.json" : "";
      facts.cargo_lock = facts.go_sum = mask & 1024;
      facts.vendored = mask & 2048;
      facts.yarn_berry = mask & 4;
      facts.yarn_node_modules = mask & 8;
      if (mask & 32) facts.python_requirements = {"requirements.txt"};
      facts.python_installable = mask & 64;
      facts.python_key = {"pyproject.toml"};
      facts.python_extra = (mask & 128) ? "tests" : "";
      facts.python_group = (mask & 256) ? "tests" : "";
      std::string text = StarterPolicy(facts);
      Result<Policy> policy = ParsePolicy(text, "starter.toml");
      ASSERT_TRUE(policy.has_value()) << policy.error().ToString() << "\n" << text;
      // Nothing under a home: every path written is relative or a system interpreter.
      if (policy->environment) {
        for (const auto& argv : policy->environment->setup) {
          for (const std::string& word : argv) EXPECT_FALSE(word.starts_with("/home")) << word;
        }
      }
    }
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
