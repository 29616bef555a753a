// What a job waits for the disk for (docs/store.md "Durability"): the records it must keep
// (the job's creation, its outcome, its receipt, its commit, a land and the audit log) are
// flushed when they are written; the steps between reach the disk with the next of those.
// Counted with strace, so the figure is the kernel's, not berth's own account of itself. Also
// the processes a job starts: none it does not need.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

class DurabilityTest : public JobsTest {
 protected:
  // The calls of `berth ARGS` and every process it starts that strace's `trace` expression
  // selects and whose line holds `call` ("sync(", "execve("), one line each with the file's path
  // (strace -y).
  std::vector<std::string> Traced(const std::vector<std::string>& args, const std::string& trace,
                                  const std::string& call) {
    std::optional<std::string> strace = FindInPath("strace");
    if (!strace.has_value()) {
      ADD_FAILURE() << "strace is not installed (scripts/install-deps installs it)";
      return {};
    }
    const std::string log = root() + "/strace.log";
    std::vector<std::string> argv = {*strace, "-f", "-qq", "-e",        trace,
                                     "-y",    "-o", log,   BERTH_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    EnvVars env = BaseEnv();
    env.emplace_back("GIT_CONFIG_NOSYSTEM", "1");
    RunResult result = RunProgram(argv, env, ws());
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    std::vector<std::string> lines;
    std::istringstream text(ReadText(log));
    for (std::string line; std::getline(text, line);) {
      if (Contains(line, call)) lines.push_back(line);
    }
    return lines;
  }
  // The fsync and fdatasync calls.
  std::vector<std::string> DiskWaits(const std::vector<std::string>& args) {
    return Traced(args, "trace=fsync,fdatasync", "sync(");
  }

  static int Count(const std::vector<std::string>& waits, const std::string& part) {
    int count = 0;
    for (const std::string& wait : waits) count += Contains(wait, part) ? 1 : 0;
    return count;
  }

  static std::string Joined(const std::vector<std::string>& waits) {
    std::string text;
    for (const std::string& wait : waits) text += wait + "\n";
    return text;
  }
};

TEST_F(DurabilityTest, ANoOpJobWaitsForTheDiskOnlyForWhatItMustKeep) {
  // The first job creates the database; the figure is for every job after it.
  ASSERT_EQ(Berth({"run", "implement", "--", "true"}).exit_code, 0);

  std::vector<std::string> waits = DiskWaits({"run", "implement", "--", "true"});
  ASSERT_FALSE(waits.empty()) << "strace saw no fsync at all; the receipt alone has one";
  // The job's creation, its receipt and its outcome: one flush of the store's log each.
  // (Before, each of about 16 commits flushed the log, and closing the store copied it into
  // the database and flushed both.)
  EXPECT_LE(Count(waits, "berth.db-wal>"), 3) << Joined(waits);
  EXPECT_EQ(Count(waits, "berth.db>"), 0) << Joined(waits);
  // The receipt file and its directory, and the job's directory: written once each.
  EXPECT_LE(waits.size(), 8u) << Joined(waits);

  // Nothing the job reported is missing from the store another process reads.
  json jobs = ListJson();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].value("state", ""), "completed");
}

// A job's fixed cost has no process in it that the job does not need: the partial-clone check
// reads the git config in-process (it was two `git config` processes per job), and so does
// the count of uncommitted changes (libgit2's status, in a thread beside the job: the user's
// git would run the repository's filters and fsmonitor hook). A no-op job starts no git.
TEST_F(DurabilityTest, ANoOpJobStartsNoGit) {
  ASSERT_TRUE(WriteText(ws() + "/src/untracked.c", "untracked\n"));  // something to count
  ASSERT_EQ(Berth({"run", "implement", "--", "true"}).exit_code, 0);
  std::vector<std::string> execs =
      Traced({"run", "implement", "--", "true"}, "trace=execve", "execve(");
  for (const std::string& exec : execs) EXPECT_FALSE(Contains(exec, "/git\"")) << exec;
  EXPECT_FALSE(execs.empty()) << "strace saw no exec at all; the agent's is one";
}

TEST_F(DurabilityTest, ACommitOfTenFilesIsFlushedAsOnePack) {
  ASSERT_EQ(Berth({"run", "implement", "--", "true"}).exit_code, 0);

  std::vector<std::string> waits =
      DiskWaits({"run", "implement", "--", "sh", "-c",
                 "mkdir -p src && for i in 0 1 2 3 4 5 6 7 8 9; do echo $i >src/f$i; done"});
  // The pack and its index, each with its directory, instead of a flush of each of the 13
  // loose objects (10 blobs, 2 trees, the commit) and of each object directory.
  EXPECT_EQ(Count(waits, "/objects/"), 4) << Joined(waits);
  EXPECT_LE(Count(waits, "berth.db-wal>"), 4) << Joined(waits);
  EXPECT_LE(waits.size(), 18u) << Joined(waits);

  json jobs = ListJson();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].value("state", ""), "completed");
  EXPECT_EQ(Git({"fsck", "--strict", "--no-dangling"}).exit_code, 0);
}

}  // namespace
}  // namespace berth::e2e
