// A claimed job in the worker's terms: its own job directory and prompt, no auto-land, and the
// submitter's paths gone from the request.
#include "worker/localize.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "job/run_request.h"
#include "sys/fs.h"

namespace berth::worker {
namespace {

class LocalizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir("/tmp", "berth-localize-");
    ASSERT_TRUE(dir.has_value());
    dir_ = *dir;
    ctx_.state_dir = dir_ + "/worker-state";
    ctx_.user.hidden_paths = {"~/.worker-secret"};
  }
  void TearDown() override { static_cast<void>(sys::RemoveTree(dir_)); }

  store::JobRecord Queued() {
    job::RunRequest r;
    r.agent = "coder";
    r.provider = "command";
    r.argv = {"/bin/sh", "-c", "true"};
    r.state_dir = "/home/submitter/.local/state/berth";
    r.prompt_file = "/home/submitter/.local/state/berth/jobs/j1/prompt.txt";
    r.has_prompt = true;
    r.prompt_text = "fix the bug\n";
    r.auto_land = true;
    r.extra_hidden = {"~/.submitter-secret"};
    store::JobRecord job;
    job.id = "j1";
    job.attempt = 3;
    job.repo = "/home/submitter/app";
    job.job_dir = "/home/submitter/.local/state/berth/jobs/j1";
    job.request_json = r.ToJson().dump();
    return job;
  }

  std::string dir_;
  job::JobContext ctx_;
};

TEST_F(LocalizeTest, TheJobRunsInTheMirrorWithItsOwnDirectoryAndPrompt) {
  store::JobRecord job = Queued();
  Result<LocalJob> local = LocalizeJob(ctx_, job, dir_ + "/mirror");
  ASSERT_TRUE(local.has_value()) << local.error().ToString();
  EXPECT_EQ(local->job_dir, ctx_.state_dir + "/jobs/j1-3");
  ApplyLocalJob(*local, &job);
  EXPECT_EQ(job.repo, dir_ + "/mirror");
  EXPECT_EQ(job.job_dir, local->job_dir);

  job::RunRequest r = *job::RunRequest::FromJson(job.request_json);
  EXPECT_EQ(r.state_dir, ctx_.state_dir);
  EXPECT_EQ(r.prompt_file, local->job_dir + "/prompt.txt");
  EXPECT_EQ(*sys::ReadFile(r.prompt_file), "fix the bug\n");
  EXPECT_FALSE(r.auto_land);
  EXPECT_EQ(r.extra_hidden, std::vector<std::string>{"~/.worker-secret"});
  EXPECT_EQ(r.argv, (std::vector<std::string>{"/bin/sh", "-c", "true"}));
}

TEST_F(LocalizeTest, AProviderThisHostLacksKeepsTheJobFromRunningHere) {
  store::JobRecord job = Queued();
  job::RunRequest r = *job::RunRequest::FromJson(job.request_json);
  r.provider = "no-such-provider";
  job.request_json = r.ToJson().dump();
  Result<LocalJob> local = LocalizeJob(ctx_, job, dir_ + "/mirror");
  ASSERT_FALSE(local.has_value());
  EXPECT_NE(local.error().ToString().find("no-such-provider"), std::string::npos)
      << local.error().ToString();
}

}  // namespace
}  // namespace berth::worker
