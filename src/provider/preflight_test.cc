#include "provider/preflight.h"

#include <gtest/gtest.h>

#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::provider {
namespace {

class CliVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sys::MakeTempDir("/var/tmp", "berth-preflight-test-").value();
    cli_ = dir_ + "/fake-cli";
    WriteCli("1.0.0");
    provider_.name = "fake";
    provider_.executable = cli_;
    provider_.version_args = {"--version"};
  }
  void TearDown() override { (void)sys::RemoveTree(dir_); }

  // A CLI that counts how often it was asked.
  void WriteCli(const std::string& version) {
    ASSERT_TRUE(sys::WriteFileAtomic(
        cli_,
        "#!/bin/sh\necho x >> " + dir_ + "/calls\necho 'fake " + version + "'\necho second line\n",
        0755));
  }
  size_t Calls() const {
    std::string calls = sys::ReadFile(dir_ + "/calls").value_or("");
    return static_cast<size_t>(std::count(calls.begin(), calls.end(), '\n'));
  }
  Result<std::string> Version(const std::string& cache) {
    return CliVersion(provider_, cli_, {{"PATH", "/usr/bin:/bin"}}, dir_, cache);
  }

  std::string dir_;
  std::string cli_;
  Provider provider_;
};

TEST_F(CliVersionTest, FirstLineOfTheAnswer) {
  EXPECT_EQ(*Version(""), "fake 1.0.0");
  EXPECT_EQ(*Version(""), "fake 1.0.0");
  EXPECT_EQ(Calls(), 2u);  // without a cache, asked every time
}

TEST_F(CliVersionTest, CacheAsksAgainOnlyWhenTheCliChanges) {
  const std::string cache = dir_ + "/versions.json";
  EXPECT_EQ(*Version(cache), "fake 1.0.0");
  EXPECT_EQ(*Version(cache), "fake 1.0.0");
  EXPECT_EQ(Calls(), 1u);
  WriteCli("2.0.0");  // a new file: another inode
  EXPECT_EQ(*Version(cache), "fake 2.0.0");
  EXPECT_EQ(Calls(), 2u);
  provider_.version_args = {"version"};  // other arguments: another question
  EXPECT_EQ(*Version(cache), "fake 2.0.0");
  EXPECT_EQ(Calls(), 3u);
  // A damaged cache is rebuilt, not trusted.
  ASSERT_TRUE(sys::WriteFileAtomic(cache, "{not json", 0600));
  EXPECT_EQ(*Version(cache), "fake 2.0.0");
  EXPECT_EQ(Calls(), 4u);
  EXPECT_EQ(*Version(cache), "fake 2.0.0");
  EXPECT_EQ(Calls(), 4u);
}

// Issue 27, finding 1: a cache entry of the wrong shape aborted (`value("key", "")` on a
// number); now it is rebuilt like a damaged cache, and so is one nested too deep.
TEST_F(CliVersionTest, ACacheEntryOfTheWrongShapeIsRebuiltNotAnAbort) {
  const std::string cache = dir_ + "/versions.json";
  for (const std::string& text :
       {"{\"" + cli_ + "\": {\"key\": 5, \"version\": 7}}", "{\"" + cli_ + "\": 5}",
        std::string(10000, '[') + std::string(10000, ']')}) {
    ASSERT_TRUE(sys::WriteFileAtomic(cache, text, 0600));
    EXPECT_EQ(*Version(cache), "fake 1.0.0") << text.substr(0, 80);
  }
  EXPECT_EQ(Calls(), 3u);
  EXPECT_EQ(*Version(cache), "fake 1.0.0");
  EXPECT_EQ(Calls(), 3u);
}

TEST_F(CliVersionTest, AFailingCliIsUnavailableAndNotCached) {
  const std::string cache = dir_ + "/versions.json";
  ASSERT_TRUE(sys::WriteFileAtomic(cli_, "#!/bin/sh\necho broken >&2\nexit 3\n", 0755));
  for (int i = 0; i < 2; ++i) {
    Result<std::string> v = Version(cache);
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error().cause(), Cause::kUnavailable);
    EXPECT_NE(v.error().message().find("broken"), std::string::npos) << v.error().message();
  }
  EXPECT_FALSE(sys::Exists(cache));
}

TEST(EnvValue, SetEmptyAndMissing) {
  Environ env = {{"A", "1"}, {"EMPTY", ""}};
  EXPECT_EQ(EnvValue(env, "A"), "1");
  EXPECT_EQ(EnvValue(env, "EMPTY"), "");
  EXPECT_FALSE(EnvValue(env, "B").has_value());
}

}  // namespace
}  // namespace berth::provider
