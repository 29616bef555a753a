#include "job/kept_write.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::job {
namespace {

// A clock whose waits pass at once: each moves it on by the time waited.
class SteppingClock : public Clock {
 public:
  int64_t WallMillis() override { return 1'780'000'000'000 + now_; }
  int64_t SteadyMillis() override { return now_; }
  bool WaitReadable(int /*fd*/, int64_t timeout_ms) override {
    now_ += timeout_ms;
    return false;
  }

 private:
  int64_t now_ = 1000;
};

Error Busy() { return Error(Cause::kBusy, "job store /s/berth.db is busy", 0, "try again"); }

class KeptWriteTest : public ::testing::Test {
 protected:
  KeptWrite Kept(int64_t limit_ms = kKeptWriteMillis) {
    KeptWrite kept{clock_, "the job's end", {}, {}, limit_ms};
    kept.say = [this](const std::string& line) { lines_.push_back(line); };
    kept.before_retry = [this] { ++retries_; };
    return kept;
  }
  std::string Lines() const {
    std::string all;
    for (const std::string& line : lines_) all += line + "\n";
    return all;
  }

  SteppingClock clock_;
  std::vector<std::string> lines_;
  int retries_ = 0;
};

TEST_F(KeptWriteTest, AWriteThatSucceedsAtOnceIsNotRetriedOrMentioned) {
  int calls = 0;
  Result<bool> r = KeepWriting<bool>(Kept(), [&]() -> Result<bool> {
    ++calls;
    return true;
  });
  ASSERT_TRUE(r);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(KeptWriteTest, AWriteOnABusyStoreIsRetriedWithBackoffUntilTheStoreIsFree) {
  int calls = 0;
  const int64_t start = clock_.SteadyMillis();
  Status r = KeepWriting<void>(Kept(), [&]() -> Status {
    if (++calls <= 4) return Busy();
    return {};
  });
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(retries_, 4);
  // 250 + 500 + 1000 + 2000 ms of backoff, on the clock.
  EXPECT_GE(clock_.SteadyMillis() - start, 3750);
  ASSERT_GE(lines_.size(), 2u) << Lines();
  EXPECT_NE(lines_.front().find("could not write the job's end"), std::string::npos) << Lines();
  EXPECT_NE(lines_.front().find("job store /s/berth.db is busy"), std::string::npos) << Lines();
  EXPECT_NE(lines_.back().find("wrote the job's end after the store was busy"), std::string::npos)
      << Lines();
}

TEST_F(KeptWriteTest, AStoreBusyPastTheLimitIsGivenUpNamingTheStoreAndTheWait) {
  int calls = 0;
  Result<bool> r = KeepWriting<bool>(Kept(60000), [&]() -> Result<bool> {
    ++calls;
    return Busy();
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().cause(), Cause::kBusy);
  EXPECT_NE(r.error().message().find("job store /s/berth.db is busy"), std::string::npos);
  EXPECT_NE(r.error().message().find("still after retrying for 60s"), std::string::npos)
      << r.error().message();
  EXPECT_EQ(r.error().hint(), "try again");
  // The backoff stops growing at its ceiling: about 60 s / 5 s tries, not a handful.
  EXPECT_GE(calls, 12);
  EXPECT_LE(calls, 20);
  EXPECT_NE(Lines().find("still cannot write the job's end after 3"), std::string::npos) << Lines();
  EXPECT_NE(lines_.back().find("gave up writing the job's end after 60s"), std::string::npos)
      << Lines();
}

TEST_F(KeptWriteTest, AFailureOtherThanBusyIsReturnedAtOnce) {
  int calls = 0;
  Status r = KeepWriting<void>(Kept(), [&]() -> Status {
    ++calls;
    return Error(Cause::kPermissionDenied, "job store /s/berth.db is read-only");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().cause(), Cause::kPermissionDenied);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(KeptWriteTest, ABusyStoreThatThenRefusesTheWriteReturnsTheRefusal) {
  int calls = 0;
  Result<bool> r = KeepWriting<bool>(Kept(), [&]() -> Result<bool> {
    if (++calls == 1) return Busy();
    return Error(Cause::kFenced, "fenced");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().cause(), Cause::kFenced);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace berth::job
