#include "sys/file_io.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sys/fs.h"
#include "sys/net.h"

namespace berth::sys {
namespace {

// Pieces of every size, empty ones among them, more than one writev takes (IOV_MAX is 1024).
std::vector<std::string> ManyPieces() {
  std::vector<std::string> pieces;
  for (int i = 0; i < 3000; ++i)
    pieces.push_back(i % 7 == 0 ? "" : std::string(static_cast<size_t>(i % 97), 'a' + i % 26));
  return pieces;
}

std::string Joined(const std::vector<std::string>& pieces) {
  std::string all;
  for (const std::string& piece : pieces) all += piece;
  return all;
}

TEST(ReadAtTest, ReadsFromAnOffsetAndStopsAtTheEnd) {
  // A directory of its own: the suite runs as root and as another user on one machine.
  const std::string dir = *MakeTempDir("/tmp", "file-io-test-");
  const std::string path = dir + "/read_at";
  Result<UniqueFd> out = CreateFile(path, 0600);
  ASSERT_TRUE(out.has_value());
  ASSERT_TRUE(WriteAll(out->get(), "0123456789", path).has_value());
  Result<UniqueFd> in = OpenReadOnly(path);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(*ReadAt(in->get(), 2, 3, path), "234");
  EXPECT_EQ(*ReadAt(in->get(), 7, 100, path), "789");
  EXPECT_EQ(*ReadAt(in->get(), 10, 100, path), "");
  // A file that grew since: the new bytes are read.
  ASSERT_TRUE(WriteAll(out->get(), "ab", path).has_value());
  EXPECT_EQ(*ReadAt(in->get(), 10, 100, path), "ab");
  Result<std::string> bad = ReadAt(-1, 0, 1, "nowhere");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().ToString().find("nowhere"), std::string::npos);
  EXPECT_TRUE(RemoveTree(dir).has_value());
}

TEST(WriteAllPiecesTest, WritesWhatTheConcatenationWould) {
  std::string dir = *MakeTempDir("/tmp", "file-io-test-");
  std::vector<std::string> pieces = ManyPieces();
  std::vector<std::string_view> views(pieces.begin(), pieces.end());
  {
    Result<UniqueFd> out = CreateFile(dir + "/out", 0600);
    ASSERT_TRUE(out);
    ASSERT_TRUE(WriteAllPieces(out->get(), views, "out"));
  }
  EXPECT_EQ(*ReadFile(dir + "/out"), Joined(pieces));
  ASSERT_TRUE(RemoveTree(dir));
}

void Nothing(int) {}

// A signal that interrupts a blocked write makes it return what it wrote so far: here 64 KiB
// at a time (a pipe's capacity), in the middle of a piece, from which WriteAllPieces resumes.
TEST(WriteAllPiecesTest, ResumesAfterShortWrites) {
  struct sigaction action = {};
  action.sa_handler = Nothing;  // and no SA_RESTART
  struct sigaction old = {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &old), 0);
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe);
  std::vector<std::string> pieces;
  for (int i = 0; i < 40; ++i) pieces.push_back(std::string(10000 + i, 'A' + i % 26));
  std::vector<std::string_view> views(pieces.begin(), pieces.end());
  std::atomic<bool> done = false;
  Status written;
  std::thread writer([&] {
    written = WriteAllPieces(pipe->write.get(), views, "pipe");
    done = true;
  });
  const std::string all = Joined(pieces);
  std::string read;
  char buffer[65536];
  while (read.size() < all.size()) {
    // Let the writer fill the pipe and block, interrupt it, then drain what it wrote.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!done) pthread_kill(writer.native_handle(), SIGUSR1);
    Result<size_t> n = ReadSome(pipe->read.get(), buffer, sizeof buffer);
    if (!n || *n == 0) break;  // the writer gave up: `written` says why
    read.append(buffer, *n);
  }
  writer.join();
  ASSERT_EQ(sigaction(SIGUSR1, &old, nullptr), 0);
  ASSERT_TRUE(written);
  EXPECT_EQ(read, all);
}

TEST(WriteAllPiecesTest, AnErrorNamesTheFile) {
  Result<Pipe> pipe = MakePipe();
  ASSERT_TRUE(pipe);
  std::string piece = "x";
  // A pipe's read end is not open for writing: EBADF.
  Status written = WriteAllPieces(pipe->read.get(), {piece}, "the index");
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().ToString().find("write the index"), std::string::npos)
      << written.error().ToString();
}

}  // namespace
}  // namespace berth::sys
