#include "env/key.h"

#include <gtest/gtest.h>

#include "git/testing.h"

namespace berth::env {
namespace {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::TempDir;
using git::testing::WriteFile;

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new git::testing::HermeticGitEnvironment);

class KeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path() + "/repo";
    InitRepo(work_);
    WriteFile(work_, "package-lock.json", "{\"v\": 1}\n");
    WriteFile(work_, "src/a.js", "1\n");
    first_ = CommitAll(work_, "first");
  }
  std::string Key(const std::string& commit, const policy::Environment& e) {
    Result<git::Repository> repo = git::Repository::Discover(work_);
    EXPECT_TRUE(repo.has_value());
    Result<std::string> key = LayerKey(*repo, commit, e);
    EXPECT_TRUE(key.has_value()) << key.error().ToString();
    return key.value_or("");
  }
  TempDir temp_{"env-key"};
  std::string work_;
  std::string first_;
};

policy::Environment Npm() {
  policy::Environment e;
  e.key = {"package-lock.json"};
  e.setup = {{"npm", "ci"}};
  e.paths = {"node_modules"};
  return e;
}

TEST_F(KeyTest, KeyFileChangeGivesANewKeyOtherFilesDoNot) {
  const std::string base = Key(first_, Npm());
  EXPECT_TRUE(IsLayerKey(base));
  WriteFile(work_, "src/a.js", "2\n");
  const std::string source_change = CommitAll(work_, "source");
  EXPECT_EQ(Key(source_change, Npm()), base);
  WriteFile(work_, "package-lock.json", "{\"v\": 2}\n");
  const std::string lock_change = CommitAll(work_, "lock");
  EXPECT_NE(Key(lock_change, Npm()), base);
  // A glob finds the same file: the same key as the literal path.
  policy::Environment glob = Npm();
  glob.key = {"*-lock.json"};
  EXPECT_EQ(Key(lock_change, glob), Key(lock_change, Npm()));
}

TEST_F(KeyTest, SetupPathsHostsGrantsAndPassedNamesAreInTheKey) {
  const std::string base = Key(first_, Npm());
  policy::Environment e = Npm();
  e.setup = {{"npm", "install"}};
  EXPECT_NE(Key(first_, e), base);
  e = Npm();
  e.paths = {"node_modules", "vendor"};
  EXPECT_NE(Key(first_, e), base);
  e = Npm();
  e.hosts = {"registry.npmjs.org"};
  EXPECT_NE(Key(first_, e), base);
  e = Npm();
  e.grants = {"cache:npm"};
  EXPECT_NE(Key(first_, e), base);
  e = Npm();
  e.pass = {"NPM_TOKEN"};
  EXPECT_NE(Key(first_, e), base);
  // The timeout decides nothing about what is built.
  e = Npm();
  e.timeout_ms = 1000;
  EXPECT_EQ(Key(first_, e), base);
}

TEST_F(KeyTest, AMissingKeyFileIsPartOfTheKeyByItsAbsence) {
  policy::Environment e = Npm();
  e.key = {"yarn.lock"};
  const std::string without = Key(first_, e);
  WriteFile(work_, "yarn.lock", "x\n");
  EXPECT_NE(Key(CommitAll(work_, "yarn"), e), without);
}

// A venv's scripts name the root setup ran at (#!<root>/.venv/bin/python): a layer built in
// one checkout would run the other checkout's paths in a second one with the same lockfile.
TEST_F(KeyTest, TwoCheckoutsOfOneCommitHaveTheirOwnKeysRegression) {
  const std::string copy = temp_.path() + "/copy";
  InitRepo(copy);
  WriteFile(copy, "package-lock.json", "{\"v\": 1}\n");
  WriteFile(copy, "src/a.js", "1\n");
  const std::string same = CommitAll(copy, "first");
  Result<git::Repository> other = git::Repository::Discover(copy);
  ASSERT_TRUE(other.has_value());
  Result<std::string> key = LayerKey(*other, same, Npm());
  ASSERT_TRUE(key.has_value());
  EXPECT_NE(*key, Key(first_, Npm()));
  Result<std::string> text = KeyText(*other, same, Npm());
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("root \"" + other->workdir() + "\"\n"), std::string::npos) << *text;
}

TEST_F(KeyTest, AServiceExtendsTheKeyWithItsSpecTheServerVersionAndItsKeyFiles) {
  const std::string without = Key(first_, Npm());
  policy::Environment e = Npm();
  policy::Service db;
  db.name = "db";
  db.kind = "postgresql";
  db.setup = {{"psql", "-f", "db/schema.sql"}};
  db.key = {"db/**"};
  e.services = {db};
  Result<git::Repository> repo = git::Repository::Discover(work_);
  ASSERT_TRUE(repo);
  // An environment without services keeps its text (and so its layers): no service lines.
  Result<std::string> plain = KeyText(*repo, first_, Npm());
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->find("service"), std::string::npos);
  Result<std::string> text = KeyText(*repo, first_, e);
  if (!text && text.error().cause() == Cause::kUnavailable)
    GTEST_SKIP() << text.error().ToString();  // no PostgreSQL server on this host
  ASSERT_TRUE(text) << text.error().ToString();
  EXPECT_NE(text->find("service [\"db\",\"postgresql\",\""), std::string::npos) << *text;
  const std::string with = Key(first_, e);
  EXPECT_NE(with, without);
  // A file the service's key names changes its key; the url does not (it names, not builds).
  WriteFile(work_, "db/schema.sql", "create table t (x int);\n");
  const std::string schema = CommitAll(work_, "schema");
  const std::string with_schema = Key(schema, e);
  EXPECT_NE(with_schema, with);
  WriteFile(work_, "db/schema.sql", "create table t (y int);\n");
  const std::string changed = CommitAll(work_, "schema change");
  EXPECT_NE(Key(changed, e), with_schema);
  policy::Environment renamed = e;
  renamed.services[0].url = "OTHER_URL";
  EXPECT_EQ(Key(changed, renamed), Key(changed, e));
  // The environment's own key files still count.
  WriteFile(work_, "package-lock.json", "{\"v\": 3}\n");
  EXPECT_NE(Key(CommitAll(work_, "lock"), e), Key(changed, e));
}

}  // namespace
}  // namespace berth::env
