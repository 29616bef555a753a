#include "env/ensure.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "git/testing.h"
#include "sys/fs.h"

namespace berth::env {
namespace {

using git::testing::ReadFileOrDie;
using git::testing::TempDir;
using git::testing::WriteFile;

const std::string kKey(64, 'a');

LayerRequest Request(const std::string& state, const std::string& job) {
  LayerRequest r;
  r.state_dir = state;
  r.key = kKey;
  r.commit = std::string(40, 'c');
  r.setup = {{"true"}};
  r.paths = {"node_modules"};
  r.job_id = job;
  return r;
}

// A build that "produces" node_modules/dep/index.js, counting its runs.
BuildFn Producing(std::atomic<int>* builds) {
  return [builds](const std::string& dir) -> Result<SetupRun> {
    ++*builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    WriteFile(dir + "/tree", "node_modules/dep/index.js", "module.exports = 1;\n");
    return SetupRun{std::nullopt, "added 1 package\n"};
  };
}

// A caller that must stop (its job was cancelled) while another builds the key returns at
// once with the reason, builds nothing and is no user of the layer.
TEST(EnsureLayer, AWaitingCallerStopsWhenAskedWithoutBuilding) {
  TempDir temp("env-ensure");
  std::atomic<bool> building = false;
  std::atomic<bool> release = false;
  std::thread builder([&] {
    Result<EnsureOutcome> outcome = EnsureLayer(
        Request(temp.path(), "builder"), [&](const std::string& dir) -> Result<SetupRun> {
          building = true;
          while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(10));
          WriteFile(dir + "/tree", "node_modules/x", "x");
          return SetupRun{std::nullopt, ""};
        });
    EXPECT_TRUE(outcome.has_value() && outcome->built);
  });
  while (!building) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  LayerRequest waiting = Request(temp.path(), "waiter");
  int asked = 0;
  waiting.should_stop = [&]() -> std::optional<std::string> {
    return ++asked >= 3 ? std::optional<std::string>("cancelled") : std::nullopt;
  };
  std::atomic<int> builds = 0;
  Result<EnsureOutcome> outcome = EnsureLayer(waiting, Producing(&builds));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
  EXPECT_EQ(outcome->stopped, std::optional<std::string>("cancelled"));
  EXPECT_FALSE(outcome->layer.has_value());
  EXPECT_EQ(builds, 0);
  release = true;
  builder.join();
  Result<std::optional<Layer>> found = FindLayer(temp.path(), kKey);
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_EQ(LayerUsers(**found), std::vector<std::string>{"builder"});
}

TEST(EnsureLayer, FiveConcurrentCallersOnOneKeyBuildItOnce) {
  TempDir temp("env-ensure");
  std::atomic<int> builds = 0;
  std::atomic<int> built_here = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 5; ++i) {
    threads.emplace_back([&, i] {
      Result<EnsureOutcome> outcome =
          EnsureLayer(Request(temp.path(), "job" + std::to_string(i)), Producing(&builds));
      ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
      ASSERT_TRUE(outcome->layer.has_value());
      if (outcome->built) ++built_here;
      EXPECT_EQ(ReadFileOrDie(outcome->layer->tree + "/node_modules/dep/index.js"),
                "module.exports = 1;\n");
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(built_here, 1);
  Result<std::optional<Layer>> found = FindLayer(temp.path(), kKey);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->meta.key, kKey);
  EXPECT_EQ((*found)->meta.output_tail, "added 1 package\n");
  EXPECT_GT((*found)->meta.size_bytes, 0u);
  EXPECT_EQ(LayerUsers(**found).size(), 5u);
  // Nothing but the layer and its lock is left in envs/.
  Result<std::vector<std::string>> names = sys::ListDir(EnvsDir(temp.path()));
  ASSERT_TRUE(names);
  EXPECT_EQ(names->size(), 2u);
}

TEST(EnsureLayer, AFailedSetupLeavesNoLayerAndTheNextCallBuildsAgain) {
  TempDir temp("env-ensure");
  int calls = 0;
  Result<EnsureOutcome> failed =
      EnsureLayer(Request(temp.path(), "job1"), [&](const std::string& dir) -> Result<SetupRun> {
        ++calls;
        WriteFile(dir + "/tree", "node_modules/half", "x");
        SetupFailure failure;
        failure.argv = {"npm", "ci"};
        failure.exit_code = 1;
        failure.reason = "`npm ci` exited 1";
        failure.output_tail = "npm ERR! 404\n";
        return SetupRun{failure, failure.output_tail};
      });
  ASSERT_TRUE(failed.has_value()) << failed.error().ToString();
  EXPECT_FALSE(failed->layer.has_value());
  ASSERT_TRUE(failed->failure.has_value());
  EXPECT_EQ(failed->failure->exit_code, 1);
  EXPECT_EQ(failed->failure->output_tail, "npm ERR! 404\n");
  Result<std::vector<std::string>> names = sys::ListDir(EnvsDir(temp.path()));
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, std::vector<std::string>{kKey + ".lock"});
  std::atomic<int> builds = 0;
  Result<EnsureOutcome> again = EnsureLayer(Request(temp.path(), "job2"), Producing(&builds));
  ASSERT_TRUE(again && again->layer);
  EXPECT_EQ(builds, 1);
}

TEST(RemoveLayer, RefusesALayerALiveJobUsesAndRemovesItOtherwise) {
  TempDir temp("env-ensure");
  std::atomic<int> builds = 0;
  ASSERT_TRUE(EnsureLayer(Request(temp.path(), "live1"), Producing(&builds)));
  Status refused =
      RemoveLayer(temp.path(), kKey, [](const std::string& job) { return job == "live1"; });
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("live job live1"), std::string::npos);
  EXPECT_TRUE(sys::Exists(LayerDir(temp.path(), kKey)));
  ASSERT_TRUE(RemoveLayer(temp.path(), kKey, [](const std::string&) { return false; }));
  EXPECT_FALSE(sys::Exists(LayerDir(temp.path(), kKey)));
  Result<LayerListing> listing = ListLayers(temp.path());
  ASSERT_TRUE(listing);
  EXPECT_TRUE(listing->layers.empty());
  EXPECT_EQ(
      RemoveLayer(temp.path(), kKey, [](const std::string&) { return false; }).error().cause(),
      Cause::kNotFound);
}

// Regression: pnpm's output ends in a box of 3-byte characters; its tail, cut inside one,
// aborted the job's supervisor when meta.json was written, with no word of why.
TEST(EnsureLayer, AnOutputTailCutInsideACharacterStillBuildsTheLayer) {
  TempDir temp("env-ensure");
  Result<EnsureOutcome> outcome =
      EnsureLayer(Request(temp.path(), "job1"), [](const std::string& dir) -> Result<SetupRun> {
        WriteFile(dir + "/tree", "node_modules/x", "x");
        return SetupRun{std::nullopt, std::string("Done \xe2\x95\xad\xe2\x94")};
      });
  ASSERT_TRUE(outcome) << outcome.error().ToString();
  ASSERT_TRUE(outcome->built);
  Result<std::optional<Layer>> found = FindLayer(temp.path(), kKey);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->meta.output_tail, "Done \xe2\x95\xad\xef\xbf\xbd");
}

TEST(LayerMeta, ServicesRoundTripAndAMetaFileFromBeforeServicesStillReads) {
  LayerMeta meta;
  meta.key = kKey;
  meta.services = {{"db", "postgresql", 4096}, {"events", "postgresql", 0}};
  Result<LayerMeta> read = LayerMeta::FromJson(meta.ToJson(), "meta.json");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read->services, meta.services);
  nlohmann::json older = meta.ToJson();
  older.erase("services");
  read = LayerMeta::FromJson(older, "meta.json");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_TRUE(read->services.empty());
  nlohmann::json bad = meta.ToJson();
  bad["services"][1]["kind"] = 5;
  read = LayerMeta::FromJson(bad, "meta.json");
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find("services[1].kind"), std::string::npos)
      << read.error().message();
}

TEST(LayerMeta, AMetaFileOfTheWrongShapeIsAnErrorNamingTheField) {
  nlohmann::json json = LayerMeta{}.ToJson();
  ASSERT_TRUE(LayerMeta::FromJson(json, "meta.json"));
  json["size_bytes"] = "big";
  Result<LayerMeta> bad = LayerMeta::FromJson(json, "meta.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("size_bytes"), std::string::npos);
}

}  // namespace
}  // namespace berth::env
