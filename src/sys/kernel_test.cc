#include "sys/kernel.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "sys/fs.h"

namespace berth::sys {
namespace {

bool BrokenPipePending() {
  sigset_t pending;
  sigemptyset(&pending);
  return ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

// The launcher writes to its init's pipes after the init may have exited: a SIGPIPE there used
// to end berth (exit 141) before it could record why the sandbox failed.
TEST(WriteAllToPeer, AClosedReaderIsEpipeAndNoSignal) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe) << pipe.error().ToString();
  pipe->read.Reset();
  // In a child with SIGPIPE's default action, which ends it: exit 0 is reached only when the
  // write failed with EPIPE, left no signal pending and put the thread's mask back.
  EXPECT_EXIT(
      {
        ::signal(SIGPIPE, SIG_DFL);
        char byte = 1;
        const int rc = kernel::WriteAllToPeer(pipe->write.get(), &byte, 1);
        sigset_t mask;
        sigemptyset(&mask);
        ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
        const bool unblocked = sigismember(&mask, SIGPIPE) == 0;
        ::_exit(rc == EPIPE && !BrokenPipePending() && unblocked ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(WriteAllToPeer, AnOpenReaderGetsTheBytes) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe) << pipe.error().ToString();
  const char sent[] = "go";
  EXPECT_EQ(kernel::WriteAllToPeer(pipe->write.get(), sent, 2), 0);
  char got[2] = {};
  EXPECT_EQ(kernel::ReadAll(pipe->read.get(), got, 2), 0);
  EXPECT_EQ(got[0], 'g');
  EXPECT_EQ(got[1], 'o');
}

}  // namespace
}  // namespace berth::sys
