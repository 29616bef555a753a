// End-to-end test of auto-land ([landing] auto = true, docs/landing.md): the runner lands a job
// that completed and passed its required check by itself, through the lander the CLI gives it
// (land/ sits above job/ in the module graph, so the runner cannot call it directly).
//
// Passes as root and as an unprivileged user; a host without the sandbox is a loud skip.

#include <gtest/gtest.h>

#include <string>

#include "base/strings.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kAutoLandPolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]

[landing]
auto = true

[[verify]]
name = "unit"
argv = ["sh", "-c", "exit 0"]
)";

// The jobs fixture's repository with auto-land on in its policy.
class AutoLandTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kAutoLandPolicy; }
};

// The runner's auto-land reached Land through JobContext::auto_land after the split of land/
// out of job/; nothing tested it, so a runner given no lander would have gone unnoticed.
TEST_F(AutoLandTest, AutoLandThroughTheLanderTheCliGivesRegression) {
  RunResult run = Berth(RunArgs({"--json"}, "implement", "edit.sh"));
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << run.Describe();
  ASSERT_EQ(job.value("state", ""), "completed") << run.Describe();
  const std::string id = job.value("id", "");

  const std::string head = GitOut({"rev-parse", "HEAD"});
  EXPECT_NE(head, base());
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), base());
  EXPECT_NE(GitOut({"log", "-1", "--format=%B"}).find("Berth-Job: " + id), std::string::npos);

  json shown = ShowJson(id);
  EXPECT_EQ(GetStr(shown, "landed_commit"), head) << shown.dump(2);
  // The runner recorded the lander's answer as the job's "land" event.
  RunResult logs = Berth({"logs", id, "--json"});
  bool event = false;
  for (const std::string& line : Split(logs.out, '\n')) {
    json e = ParseJson(line);
    if (e.is_object() && e.value("step", "") == "land" &&
        e.value("detail", "") == "auto-landed on main as " + head.substr(0, 12))
      event = true;
  }
  EXPECT_TRUE(event) << logs.Describe();
}

}  // namespace
}  // namespace berth::e2e
