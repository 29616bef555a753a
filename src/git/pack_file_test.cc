#include "git/pack_file.h"

#include <gtest/gtest.h>

#include <string>

#include "git/testing.h"

namespace berth::git {
namespace {

using testing::InitRepo;
using testing::ReadFileOrDie;
using testing::RunGit;
using testing::TempDir;

std::string Unhex(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

const unsigned char* Bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// A pack of one blob made by git, and its index.
class PackFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string work = temp_.path() + "/repo";
    InitRepo(work);
    std::string id = RunGit({"hash-object", "-w", "--stdin"}, work, {}, "packed content\n").output;
    id.pop_back();
    id_ = Unhex(id);
    std::string base =
        RunGit({"pack-objects", "-q", temp_.path() + "/p"}, work, {}, id + "\n").output;
    base.pop_back();
    pack_ = ReadFileOrDie(temp_.path() + "/p-" + base + ".pack");
    idx_ = ReadFileOrDie(temp_.path() + "/p-" + base + ".idx");
  }

  TempDir temp_{"berth-pack-file-"};
  std::string id_;
  std::string pack_;
  std::string idx_;
};

TEST_F(PackFileTest, FindsAndStreamsABlobGitPacked) {
  Result<PackIndex> index = PackIndex::Parse(idx_);
  ASSERT_TRUE(index.has_value()) << index.error().ToString();
  EXPECT_EQ(index->count(), 1u);
  EXPECT_EQ(index->IdAt(0), id_);
  std::optional<PackIndex::Entry> entry = index->Find(Bytes(id_));
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->offset, 12u);
  std::string other = id_;
  other[19] ^= 1;
  EXPECT_FALSE(index->Find(Bytes(other)).has_value());

  Result<PackEntryHeader> header = ParsePackEntryHeader(pack_, entry->offset);
  ASSERT_TRUE(header.has_value()) << header.error().ToString();
  EXPECT_EQ(header->type, PackEntryHeader::kBlob);
  EXPECT_EQ(header->size, 15u);
  std::string buffer(kPieceSize, '\0');
  std::string content;
  Status streamed = StreamPackedBlob(pack_, *entry, *header, buffer.data(), "f",
                                     [&](const Pieces& next) -> Status {
                                       for (;;) {
                                         std::string_view piece = TRY(next());
                                         if (piece.empty()) return {};
                                         content.append(piece);
                                       }
                                     });
  ASSERT_TRUE(streamed.has_value()) << streamed.error().ToString();
  EXPECT_EQ(content, "packed content\n");
}

// Packs over 2 GiB keep offsets of 2^31 and more in a table of 8-byte offsets; the 4-byte
// offset then has its high bit set and holds the index into that table.
TEST_F(PackFileTest, ReadsTheTableOfLargeOffsets) {
  std::string large = idx_;
  size_t offset_at = 8 + 1024 + 20 + 4;
  large.replace(offset_at, 4, std::string("\x80\0\0\0", 4));
  std::string eight("\0\0\0\x01\0\0\0\x0c", 8);  // 2^32 + 12
  large.insert(large.size() - 40, eight);
  Result<PackIndex> index = PackIndex::Parse(large);
  ASSERT_TRUE(index.has_value()) << index.error().ToString();
  std::optional<PackIndex::Entry> entry = index->Find(Bytes(id_));
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->offset, (uint64_t{1} << 32) + 12);
  // The offset lies past this pack: its header is refused, not read.
  EXPECT_FALSE(ParsePackEntryHeader(pack_, entry->offset).has_value());

  // An index into the table past its end: not found (libgit2 then reports the damage).
  large.replace(offset_at, 4, std::string("\x80\0\0\x01", 4));
  index = PackIndex::Parse(large);
  ASSERT_TRUE(index.has_value());
  EXPECT_FALSE(index->Find(Bytes(id_)).has_value());
}

TEST_F(PackFileTest, RefusesIndexesItDoesNotRead) {
  EXPECT_FALSE(PackIndex::Parse("").has_value());
  EXPECT_FALSE(PackIndex::Parse(idx_.substr(0, idx_.size() - 1)).has_value());
  EXPECT_FALSE(PackIndex::Parse(idx_ + std::string(7, '\0')).has_value());
  std::string v1 = idx_;
  v1[7] = 1;
  EXPECT_FALSE(PackIndex::Parse(v1).has_value());
  std::string magic = idx_;
  magic[0] = 'x';
  EXPECT_FALSE(PackIndex::Parse(magic).has_value());
  std::string fanout = idx_;
  fanout[8 + 3] = 5;  // the first count above the last
  EXPECT_FALSE(PackIndex::Parse(fanout).has_value());
}

TEST_F(PackFileTest, RefusesEntryHeadersOutsideThePack) {
  EXPECT_FALSE(ParsePackEntryHeader(pack_, 0).has_value());
  EXPECT_FALSE(ParsePackEntryHeader(pack_, 11).has_value());
  EXPECT_FALSE(ParsePackEntryHeader(pack_, pack_.size() - 20).has_value());
  EXPECT_FALSE(ParsePackEntryHeader(pack_.substr(0, 20), 12).has_value());
  // A size varint that runs into the checksum.
  std::string endless =
      pack_.substr(0, 12) + std::string(5, '\xff') + pack_.substr(pack_.size() - 20);
  EXPECT_FALSE(ParsePackEntryHeader(endless, 12).has_value());
  // One longer than 64 bits.
  std::string wide = pack_.substr(0, 12) + std::string(12, '\xff') + std::string(1, '\x01') +
                     pack_.substr(pack_.size() - 20);
  EXPECT_FALSE(ParsePackEntryHeader(wide, 12).has_value());
}

}  // namespace
}  // namespace berth::git
