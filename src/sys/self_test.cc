#include "sys/self.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "sys/fs.h"
#include "sys/process.h"

namespace berth::sys {
namespace {

// Sets `name` for the test's life and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value == nullptr)
      ::unsetenv(name);
    else
      ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(EnvironmentPath, OnlyAnAbsolutePathCounts) {
  constexpr char kName[] = "BERTH_SELF_TEST_PATH";
  {
    ScopedEnv env(kName, "/var/tmp/x");
    EXPECT_EQ(EnvironmentPath(kName), "/var/tmp/x");
  }
  {
    ScopedEnv env(kName, "relative/dir");
    EXPECT_EQ(EnvironmentPath(kName), "") << "a relative value is treated as unset";
  }
  {
    ScopedEnv env(kName, "");
    EXPECT_EQ(EnvironmentPath(kName), "");
  }
  {
    ScopedEnv env(kName, nullptr);
    EXPECT_EQ(EnvironmentPath(kName), "");
  }
}

TEST(IsTerminal, APipeIsNotOne) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe.has_value());
  EXPECT_FALSE(IsTerminal(pipe->read.get()));
  EXPECT_FALSE(IsTerminal(-1));
}

TEST(SavedSignalMask, PutsTheThreadsMaskBack) {
  auto blocked = [](int signal) {
    sigset_t now;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &now);
    return sigismember(&now, signal) == 1;
  };
  ASSERT_FALSE(blocked(SIGHUP));
  {
    SavedSignalMask saved;
    BlockStopSignals();
    EXPECT_TRUE(blocked(SIGINT));
    EXPECT_TRUE(blocked(SIGTERM));
    EXPECT_TRUE(blocked(SIGHUP));
  }
  EXPECT_FALSE(blocked(SIGINT));
  EXPECT_FALSE(blocked(SIGTERM));
  EXPECT_FALSE(blocked(SIGHUP));
}

TEST(MakeSocketPair, KeepsEachMessageWhole) {
  Result<std::pair<UniqueFd, UniqueFd>> pair = MakeSocketPair();
  ASSERT_TRUE(pair.has_value()) << pair.error().message();
  ASSERT_EQ(::write(pair->first.get(), "abc", 3), 3);
  ASSERT_EQ(::write(pair->first.get(), "de", 2), 2);
  char buffer[16];
  EXPECT_EQ(::read(pair->second.get(), buffer, sizeof buffer), 3) << "one message, not a stream";
  EXPECT_EQ(::read(pair->second.get(), buffer, sizeof buffer), 2);
}

}  // namespace
}  // namespace berth::sys
