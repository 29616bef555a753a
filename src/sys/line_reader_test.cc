#include "sys/line_reader.h"

#include <gtest/gtest.h>

#include "sys/file_io.h"
#include "sys/fs.h"

namespace berth::sys {
namespace {

TEST(LineReaderTest, LinesTooLongLinesTimeoutAndEnd) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe);
  LineReader reader(pipe->read.get(), 8);
  ASSERT_TRUE(WriteAll(pipe->write.get(), "one\n0123456789abcdef\ntwo\n", "pipe"));
  Result<LineReader::Item> item = reader.Next(1000);
  ASSERT_TRUE(item);
  EXPECT_EQ(item->kind, LineReader::Kind::kLine);
  EXPECT_EQ(item->text, "one");
  item = reader.Next(1000);
  EXPECT_EQ(item->kind, LineReader::Kind::kTooLong);
  item = reader.Next(1000);
  EXPECT_EQ(item->kind, LineReader::Kind::kLine);
  EXPECT_EQ(item->text, "two");
  item = reader.Next(50);
  EXPECT_EQ(item->kind, LineReader::Kind::kTimeout);
  // A too-long line that is still arriving is reported once and skipped to its end.
  ASSERT_TRUE(WriteAll(pipe->write.get(), "0123456789", "pipe"));
  item = reader.Next(1000);
  EXPECT_EQ(item->kind, LineReader::Kind::kTooLong);
  ASSERT_TRUE(WriteAll(pipe->write.get(), "still the same line\nlast", "pipe"));
  pipe->write.Reset();
  item = reader.Next(1000);
  EXPECT_EQ(item->kind, LineReader::Kind::kLine);
  EXPECT_EQ(item->text, "last");
  item = reader.Next(1000);
  EXPECT_EQ(item->kind, LineReader::Kind::kEnd);
}

// A timeout of 0 does not wait, but it reads what is already there (a poll loop's drain).
TEST(LineReaderTest, ZeroTimeoutTakesWhatHasArrivedRegression) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe);
  LineReader reader(pipe->read.get(), 64);
  EXPECT_EQ(reader.Next(0)->kind, LineReader::Kind::kTimeout);
  ASSERT_TRUE(WriteAll(pipe->write.get(), "ready\npart", "pipe"));
  Result<LineReader::Item> item = reader.Next(0);
  ASSERT_TRUE(item);
  EXPECT_EQ(item->kind, LineReader::Kind::kLine);
  EXPECT_EQ(item->text, "ready");
  EXPECT_EQ(reader.Next(0)->kind, LineReader::Kind::kTimeout);
}

}  // namespace
}  // namespace berth::sys
