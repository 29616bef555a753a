#include "sys/message_socket.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "sys/file_io.h"
#include "sys/fs.h"

namespace berth::sys {
namespace {

TEST(MessageSocketTest, AMessageArrivesWholeWithItsDescriptor) {
  Result<std::pair<UniqueFd, UniqueFd>> pair = MakeSocketPair();
  ASSERT_TRUE(pair.has_value());
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe.has_value());
  const std::string data(5000, 'x');
  ASSERT_TRUE(SendMessage(pair->first.get(), data, pipe->write.get()).has_value());
  ASSERT_TRUE(SendMessage(pair->first.get(), "second", -1).has_value());

  Result<std::optional<Message>> first = ReceiveMessage(pair->second.get());
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->data, data);
  ASSERT_TRUE((*first)->fd.valid());
  // The descriptor that came is the pipe's write end: what goes in comes out of its read end.
  ASSERT_TRUE(WriteAll((*first)->fd.get(), "through", "the pipe").has_value());
  char bytes[7];
  ASSERT_EQ(::read(pipe->read.get(), bytes, sizeof bytes), 7);
  EXPECT_EQ(std::string(bytes, 7), "through");

  Result<std::optional<Message>> second = ReceiveMessage(pair->second.get());
  ASSERT_TRUE(second.has_value() && second->has_value());
  EXPECT_EQ((*second)->data, "second");
  EXPECT_FALSE((*second)->fd.valid());
}

TEST(MessageSocketTest, TheEndOfTheStreamIsNoMessage) {
  Result<std::pair<UniqueFd, UniqueFd>> pair = MakeSocketPair();
  ASSERT_TRUE(pair.has_value());
  pair->first.Reset();
  Result<std::optional<Message>> message = ReceiveMessage(pair->second.get());
  ASSERT_TRUE(message.has_value()) << message.error().ToString();
  EXPECT_FALSE(message->has_value());
}

TEST(MessageSocketTest, SendingToAPeerThatIsGoneIsUnavailable) {
  Result<std::pair<UniqueFd, UniqueFd>> pair = MakeSocketPair();
  ASSERT_TRUE(pair.has_value());
  pair->second.Reset();
  Status sent = SendMessage(pair->first.get(), "job", -1);  // no SIGPIPE either
  ASSERT_FALSE(sent.has_value());
  EXPECT_EQ(sent.error().cause(), Cause::kUnavailable);
}

TEST(MessageSocketTest, EmptyOrOversizedMessagesAreRefused) {
  Result<std::pair<UniqueFd, UniqueFd>> pair = MakeSocketPair();
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(SendMessage(pair->first.get(), "", -1).error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(
      SendMessage(pair->first.get(), std::string(kMaxMessageBytes + 1, 'x'), -1).error().cause(),
      Cause::kInvalidArgument);
}

TEST(MessageSocketTest, ReplaceDescriptorMakesTheTargetADuplicate) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe.has_value());
  Result<Pipe> other = MakePipe();
  ASSERT_TRUE(other.has_value());
  ASSERT_TRUE(ReplaceDescriptor(pipe->write.get(), other->write.get()).has_value());
  ASSERT_TRUE(WriteAll(other->write.get(), "z", "the pipe").has_value());
  char byte = 0;
  ASSERT_EQ(::read(pipe->read.get(), &byte, 1), 1);
  EXPECT_EQ(byte, 'z');
}

}  // namespace
}  // namespace berth::sys
