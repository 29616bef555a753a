#include "sys/command.h"

#include <gtest/gtest.h>

#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::sys {
namespace {

TEST(FindExecutable, SearchesAbsoluteEntriesOnly) {
  Result<std::string> sh = FindExecutable("sh", "relative/dir::/nonexistent:/bin:/usr/bin");
  ASSERT_TRUE(sh.has_value()) << sh.error().ToString();
  EXPECT_EQ((*sh)[0], '/');
  EXPECT_FALSE(FindExecutable("sh", "bin:usr/bin").has_value());
  Result<std::string> missing = FindExecutable("berth-no-such-program", "/bin:/usr/bin");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().cause(), Cause::kNotFound);
  EXPECT_TRUE(FindExecutable("/bin/sh", "").has_value());
  EXPECT_FALSE(FindExecutable("/etc/passwd", "").has_value());
}

TEST(RunCommand, CapturesOutputStatusAndEnvironment) {
  Result<CommandResult> r = RunCommand({"/bin/sh", "-c", "echo out; echo err >&2; echo $X; exit 3"},
                                       {{"X", "value"}}, "/", 5000);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status.code, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->output, "out\nerr\nvalue\n");
}

TEST(RunCommand, TimeoutKillsTheWholeGroup) {
  Result<CommandResult> r = RunCommand({"/bin/sh", "-c", "sleep 30 & sleep 30"}, {}, "/", 200);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->timed_out);
  EXPECT_TRUE(r->status.signaled);
}

TEST(RunCommand, OutputIsBounded) {
  Result<CommandResult> r =
      RunCommand({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, {}, "/", 5000, 1000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->output.size(), 1000u);
  EXPECT_EQ(r->status.code, 0);
}

TEST(RunCommand, AProgramThatCannotStartReportsAShellStatusAndWhyRegression) {
  Result<CommandResult> missing = RunCommand({"/nonexistent-berth-program"}, {}, "/", 5000);
  ASSERT_TRUE(missing.has_value()) << missing.error().ToString();
  EXPECT_EQ(missing->status.code, 127);
  EXPECT_NE(missing->output.find("/nonexistent-berth-program"), std::string::npos);
  Result<CommandResult> bad_dir = RunCommand({"/bin/true"}, {}, "/nonexistent-berth-dir", 5000);
  ASSERT_TRUE(bad_dir.has_value());
  EXPECT_NE(bad_dir->status.code, 0);
}

TEST(RunCommandSeparately, KeepsStdoutAndStderrApart) {
  Result<SeparatedResult> r = RunCommandSeparately(
      {"/bin/sh", "-c", "echo out; echo err >&2; echo more; exit 3"}, {}, "/", 5000);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->out, "out\nmore\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->status.code, 3);
  EXPECT_FALSE(r->timed_out);
}

TEST(RunCommandSeparately, TimeoutAndBound) {
  Result<SeparatedResult> slow = RunCommandSeparately({"/bin/sh", "-c", "sleep 30"}, {}, "/", 200);
  ASSERT_TRUE(slow.has_value());
  EXPECT_TRUE(slow->timed_out);
  Result<SeparatedResult> big = RunCommandSeparately(
      {"/bin/sh", "-c", "head -c 100000 /dev/zero; head -c 5000 /dev/zero >&2"}, {}, "/", 5000,
      1000);
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->out.size(), 1000u);
  EXPECT_EQ(big->err.size(), 1000u);
  EXPECT_EQ(big->status.code, 0);
}

// A signing program reads the commit on stdin: from the file the caller opened, at its offset.
TEST(RunCommandSeparately, StdinFromAFile) {
  Result<std::string> dir = MakeTempDir("/tmp", "command-test-");
  ASSERT_TRUE(dir.has_value()) << dir.error().ToString();
  ASSERT_TRUE(WriteNewFile(*dir + "/in", "tree 1234\n\nmessage\n", 0600));
  Result<UniqueFd> in = OpenReadOnly(*dir + "/in");
  ASSERT_TRUE(in.has_value()) << in.error().ToString();
  Result<SeparatedResult> r =
      RunCommandSeparately({"/bin/sh", "-c", "wc -l; cat"}, {}, "/", 5000, 1024, in->get());
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->out, "3\n");  // wc read it all; nothing was left for cat
  EXPECT_EQ(r->status.code, 0);
  // By default stdin is /dev/null.
  Result<SeparatedResult> none = RunCommandSeparately({"/bin/sh", "-c", "cat"}, {}, "/", 5000);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->out, "");
  ASSERT_TRUE(RemoveTree(*dir));
}

}  // namespace
}  // namespace berth::sys
