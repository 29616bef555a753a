#include "cli/base64.h"

#include <gtest/gtest.h>

namespace berth::cli {
namespace {

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
}

TEST(Base64, BytesThatAreNotUtf8) {
  EXPECT_EQ(Base64(std::string("\xff\xfe\x00\x80", 4)), "//4AgA==");
  EXPECT_EQ(Base64(std::string(1000, '\xff')).size(), 4u * 334u);
}

}  // namespace
}  // namespace berth::cli
