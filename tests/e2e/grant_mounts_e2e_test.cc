// End-to-end tests of grants and workspaces that hold other mounts: a tmpfs mounted under a
// granted directory shows inside the sandbox, read-only under a read: grant, and a job with such
// a grant ends with a recorded state (berth used to die of SIGPIPE, exit 141, the job stale).
//
// The mount is made in a mount namespace of the test's own, around the berth it runs: with
// `unshare -m` as root; as an unprivileged user with `unshare -rm`, then back to the caller's
// own uid in a nested user namespace (`unshare -U --map-user`), so that berth runs unprivileged
// with a mount it cannot change under the granted directory, as on a developer's machine.
// Without unshare(1) or user namespaces the tests are loud skips (failures when CI is set).

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// Mounts a tmpfs on "$1/sub", writes "$1/sub/f", then runs the rest of its arguments.
constexpr char kMountThenRun[] =
    R"(mount -t tmpfs -o mode=0755 tmpfs "$1/sub" && echo secret > "$1/sub/f" && shift &&)"
    R"( exec "$@")";

class GrantMountsTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    std::optional<std::string> unshare = FindInPath("unshare");
    REQUIRE_FEATURE(unshare.has_value(), "no unshare(1) to make a mount under a granted path");
    unshare_ = *unshare;
    std::optional<std::string> env = FindInPath("env");
    ASSERT_TRUE(env.has_value());
    env_ = *env;
    // The wrapper itself, once: a host that refuses it is a skip, not a failure of berth.
    const std::string dir = root() + "/probe-mount";
    ASSERT_TRUE(sys::MakeDirs(dir + "/sub", 0755));
    RunResult probe = RunWithMountUnder(dir, {"--version"});
    RequireFeature(probe.exit_code == 0,
                   "cannot mount a tmpfs in a private mount namespace here (" +
                       std::string(IsRoot() ? "unshare -m" : "unshare -rm, user namespaces") +
                       "): " + probe.Describe());
  }

  // Runs `berth ARGS` in a mount namespace where DIR/sub is a tmpfs holding the file "f"
  // ("secret"). DIR/sub must exist.
  RunResult RunWithMountUnder(const std::string& dir, const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {unshare_};
    if (IsRoot()) {
      argv.insert(argv.end(), {"-m", "--propagation", "private"});
    } else {
      argv.insert(argv.end(), {"-r", "-m"});
    }
    argv.insert(argv.end(), {"sh", "-c", kMountThenRun, "sh", dir});
    if (!IsRoot()) {
      argv.insert(argv.end(), {unshare_, "-U", "--map-user=" + std::to_string(getuid()),
                               "--map-group=" + std::to_string(getgid())});
    }
    argv.insert(argv.end(), {env_, "GIT_CONFIG_NOSYSTEM=1", BERTH_BINARY});
    argv.insert(argv.end(), args.begin(), args.end());
    return RunOutside(argv);
  }

  // A directory in the home (bound into the sandbox only by a grant: the home is a private
  // tmpfs inside) with an empty "sub" to mount on.
  std::string GrantedDir() const {
    const std::string dir = home() + "/granted";
    EXPECT_TRUE(sys::MakeDirs(dir + "/sub", 0755));
    return dir;
  }

  std::vector<std::string> ProbeArgs(const std::vector<std::string>& berth_args,
                                     const std::vector<std::string>& op) const {
    std::vector<std::string> args = {"sandbox"};
    args.insert(args.end(), berth_args.begin(), berth_args.end());
    args.insert(args.end(), {"--", SANDBOX_PROBE});
    args.insert(args.end(), op.begin(), op.end());
    return args;
  }

  std::string unshare_;
  std::string env_;
};

// The probe's report line ("write errno=30 EROFS", "read ok ...") starts with `expected`.
testing::AssertionResult ReportStartsWith(const RunResult& result, const std::string& expected) {
  if (result.out.compare(0, expected.size(), expected) == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "expected a report starting with \"" << expected << "\"\n"
                                     << result.Describe();
}

TEST_F(GrantMountsTest, AReadGrantShowsTheMountsUnderItReadOnly) {
  const std::string dir = GrantedDir();
  const std::vector<std::string> grant = {"--grant", "read:" + dir};
  RunResult read = RunWithMountUnder(dir, ProbeArgs(grant, {"read", dir + "/sub/f"}));
  EXPECT_TRUE(ReportStartsWith(read, "read ok bytes=7"));  // "secret\n"
  // The tmpfs is writable (AWriteGrantShowsTheMountsUnderItAsTheHostHasThem), yet read-only
  // inside: every mount under a read grant is.
  RunResult write = RunWithMountUnder(dir, ProbeArgs(grant, {"write", dir + "/sub/w"}));
  EXPECT_TRUE(ReportStartsWith(write, "write errno=30 EROFS"));
  RunResult write_top = RunWithMountUnder(dir, ProbeArgs(grant, {"write", dir + "/w"}));
  EXPECT_TRUE(ReportStartsWith(write_top, "write errno=30 EROFS"));
  EXPECT_FALSE(PathExists(dir + "/w"));
}

TEST_F(GrantMountsTest, AWriteGrantShowsTheMountsUnderItAsTheHostHasThem) {
  const std::string dir = GrantedDir();
  const std::vector<std::string> grant = {"--grant", "write:" + dir};
  RunResult read = RunWithMountUnder(dir, ProbeArgs(grant, {"read", dir + "/sub/f"}));
  EXPECT_TRUE(ReportStartsWith(read, "read ok bytes=7"));
  RunResult write = RunWithMountUnder(dir, ProbeArgs(grant, {"write", dir + "/sub/w"}));
  EXPECT_TRUE(ReportStartsWith(write, "write ok"));
  RunResult write_top = RunWithMountUnder(dir, ProbeArgs(grant, {"write", dir + "/w"}));
  EXPECT_TRUE(ReportStartsWith(write_top, "write ok"));
  EXPECT_EQ(ReadText(dir + "/w"), "probe\n");
}

TEST_F(GrantMountsTest, AWorkspaceWithAMountInsideRuns) {
  ASSERT_TRUE(sys::MakeDirs(ws() + "/sub", 0755));
  RunResult read = RunWithMountUnder(ws(), ProbeArgs({}, {"read", ws() + "/sub/f"}));
  EXPECT_TRUE(ReportStartsWith(read, "read ok bytes=7"));
}

// The job of the report: before, the bind failed (EINVAL), berth wrote to the pipe of its dead
// init, died of SIGPIPE (141) and left the job stale. Now the agent sees the mount read-only and
// the job completes.
TEST_F(GrantMountsTest, AJobWithAReadGrantOverAMountCompletes) {
  const std::string dir = GrantedDir();
  const std::string agent = "test \"$(cat " + dir + "/sub/f)\" = secret && ! (echo x > " + dir +
                            "/sub/w) 2>/dev/null && ! (echo x > " + dir + "/w) 2>/dev/null";
  RunResult run = RunWithMountUnder(
      dir, {"run", "--json", "implement", "--grant", "read:" + dir, "--", "sh", "-c", agent});
  EXPECT_NE(run.exit_code, 141) << "berth died of SIGPIPE\n" << run.Describe();
  const std::string id = NewestJobId();
  ASSERT_FALSE(id.empty()) << run.Describe();
  json job = WaitForEnd(id);
  EXPECT_EQ(GetStr(job, "state"), "completed") << run.Describe() << job.dump(2);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
}

}  // namespace
}  // namespace berth::e2e
