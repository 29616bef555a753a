#include "store/job_id.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace berth::store {
namespace {

constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

TEST(NewJobId, ThirteenCharactersOfTheAlphabet) {
  for (int64_t now_ms : {int64_t{0}, int64_t{1732234009600}, int64_t{4102444800000}}) {
    std::string id = NewJobId(now_ms);
    ASSERT_EQ(id.size(), 13u) << id;
    EXPECT_EQ(id.find_first_not_of(kAlphabet), std::string::npos) << id;
    EXPECT_TRUE(LooksLikeJobIdPrefix(id)) << id;
  }
}

TEST(NewJobId, TimePartIsTheMilliseconds) {
  EXPECT_EQ(NewJobId(0).substr(0, 9), "000000000");
  EXPECT_EQ(NewJobId(1).substr(0, 9), "000000001");
  EXPECT_EQ(NewJobId(32).substr(0, 9), "000000010");
}

TEST(NewJobId, SortsByTime) {
  // The time part counts milliseconds, so ids a millisecond or more apart sort by time.
  std::vector<std::string> ids;
  int64_t now_ms = 1700000000000;
  for (int64_t step : std::vector<int64_t>{1, 1024, 2000, 60000, 3600000, 86400000, 31536000000}) {
    ids.push_back(NewJobId(now_ms));
    now_ms += step;
  }
  ids.push_back(NewJobId(now_ms));
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]);
}

TEST(NewJobId, RandomPartDiffers) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(NewJobId(1700000000000));
  // 100 draws of 20 bits: a collision is rare.
  EXPECT_GT(ids.size(), 97u);
}

TEST(LooksLikeJobIdPrefix, AcceptsLowerCaseAlphanumericsUpToThirteenCharacters) {
  EXPECT_TRUE(LooksLikeJobIdPrefix("0"));
  EXPECT_TRUE(LooksLikeJobIdPrefix("1kb3x7q2mzr4a"));
  EXPECT_FALSE(LooksLikeJobIdPrefix(""));
  EXPECT_FALSE(LooksLikeJobIdPrefix("1kb3x7q2mzr4ab"));
  EXPECT_FALSE(LooksLikeJobIdPrefix("01JD"));
  EXPECT_FALSE(LooksLikeJobIdPrefix("01%"));
  EXPECT_FALSE(LooksLikeJobIdPrefix("01_"));
  EXPECT_FALSE(LooksLikeJobIdPrefix("a b"));
  EXPECT_FALSE(LooksLikeJobIdPrefix("../x"));
}

}  // namespace
}  // namespace berth::store
