// End-to-end tests of launch failures: the exit code of `berth sandbox` and the state of a job
// follow the launch failure's type (sandbox::LaunchFailure), never the words of its message.
// Also the processes berth starts on the host (sys::Spawn) as a job's command sees them.
//
// Passes as root and as an unprivileged user; waiting is polling with a deadline.

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using LaunchFailureTest = JobsTest;

TEST_F(LaunchFailureTest, SandboxExitCodesFollowTheFailureType) {
  RunResult missing = Berth({"sandbox", "--", ws() + "/no-such-command"});
  EXPECT_EQ(missing.exit_code, 127) << missing.Describe();
  EXPECT_TRUE(Contains(missing.err, "cannot run")) << missing.Describe();

  ASSERT_TRUE(WriteText(ws() + "/not-executable", "#!/bin/sh\nexit 0\n", 0644));
  RunResult denied = Berth({"sandbox", "--", ws() + "/not-executable"});
  EXPECT_EQ(denied.exit_code, 126) << denied.Describe();
  EXPECT_TRUE(Contains(denied.err, "Permission denied")) << denied.Describe();

  // The command's own status passes through unchanged, including the codes above.
  RunResult own = Berth({"sandbox", "--", "sh", "-c", "exit 126"});
  EXPECT_EQ(own.exit_code, 126) << own.Describe();
}

TEST_F(LaunchFailureTest, AJobWhoseCommandCannotRunIsChildFailed) {
  for (const std::string& command : {ws() + "/no-such-agent", ws() + "/src/tool.sh"}) {
    RunResult run = Berth({"run", "--json", "implement", "--", command});
    std::string id = NewestJobId();
    json job = WaitForEnd(id);
    EXPECT_EQ(GetStr(job, "state"), "child-failed") << command << "\n"
                                                    << run.Describe() << job.dump(2);
    EXPECT_NE(run.exit_code, 0) << run.Describe();
  }
}

}  // namespace
}  // namespace berth::e2e
