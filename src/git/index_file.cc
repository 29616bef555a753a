#include "git/index_file.h"

namespace berth::git {

namespace {

constexpr size_t kFixedEntrySize = 62;  // ten 32-bit stat fields, the object id, the flags
constexpr uint16_t kExtendedFlag = 0x4000;
constexpr uint16_t kNameMask = 0x0fff;
constexpr size_t kIdSize = 20;

uint16_t Be16(std::string_view data, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(data[at]) << 8 |
                               static_cast<unsigned char>(data[at + 1]));
}

Error Malformed(const std::string& what) { return Error(Cause::kInternal, what); }

class TreeReader {
 public:
  explicit TreeReader(std::string_view data) : data_(data) {}

  Result<CachedTree> Read(int depth) {
    if (depth > 4096) return Malformed("cached trees nest too deep");
    CachedTree tree;
    size_t nul = data_.find('\0', at_);
    if (nul == std::string_view::npos) return Malformed("a cached tree has no name");
    tree.name = data_.substr(at_, nul - at_);
    at_ = nul + 1;
    tree.entries = TRY(Number(' '));
    long subtrees = TRY(Number('\n'));
    if (subtrees < 0) return Malformed("a cached tree has a negative subtree count");
    if (tree.entries >= 0) {
      if (data_.size() - at_ < kIdSize) return Malformed("a cached tree id is cut short");
      tree.id = data_.substr(at_, kIdSize);
      at_ += kIdSize;
    }
    for (long i = 0; i < subtrees; ++i) tree.subtrees.push_back(TRY(Read(depth + 1)));
    return tree;
  }

  bool AtEnd() const { return at_ == data_.size(); }

 private:
  Result<long> Number(char end) {
    size_t stop = data_.find(end, at_);
    if (stop == std::string_view::npos || stop == at_ || stop - at_ > 10)
      return Malformed("a cached tree count is not a number");
    std::string_view text = data_.substr(at_, stop - at_);
    bool negative = text[0] == '-';
    if (negative) text.remove_prefix(1);
    if (text.empty()) return Malformed("a cached tree count is not a number");
    long value = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return Malformed("a cached tree count is not a number");
      value = value * 10 + (c - '0');
    }
    at_ = stop + 1;
    return negative ? -value : value;
  }

  std::string_view data_;
  size_t at_ = 0;
};

// Version 4's count of bytes to drop from the previous path (git's varint: each continuation
// adds one before shifting, so that every value has one encoding).
Result<size_t> ReadVarint(std::string_view data, size_t& at, size_t end) {
  if (at >= end) return Malformed("an entry is cut short");
  auto c = static_cast<unsigned char>(data[at++]);
  uint64_t value = c & 127;
  while ((c & 128) != 0) {
    if (at >= end || value > (uint64_t{1} << 48)) return Malformed("a path length is malformed");
    c = static_cast<unsigned char>(data[at++]);
    value = ((value + 1) << 7) + (c & 127);
  }
  return static_cast<size_t>(value);
}

}  // namespace

uint32_t IndexBe32(std::string_view data, size_t at) {
  auto byte = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(data[at + i]));
  };
  return byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
}

Status ReadIndexFile(std::string_view data, IndexFile& out) {
  if (data.size() < kIndexHeaderSize + kIndexChecksumSize || data.substr(0, 4) != "DIRC")
    return Malformed("no index header");
  out.version = IndexBe32(data, 4);
  if (out.version < 2 || out.version > 4)
    return Malformed("index version " + std::to_string(out.version));
  const uint32_t count = IndexBe32(data, 8);
  const size_t body_end = data.size() - kIndexChecksumSize;
  const bool v4 = out.version == 4;
  // A count larger than the file could hold is malformed, not a reason to reserve memory.
  if (count > (body_end - kIndexHeaderSize) / (kFixedEntrySize + 1))
    return Malformed("more entries than the file holds");

  out.entries.clear();
  out.entries.reserve(count);
  // Version 4: where each path lies in expanded_paths; the views are made once it stops
  // growing.
  std::vector<std::pair<size_t, size_t>> spans;
  std::string& paths = out.expanded_paths;
  paths.clear();
  std::string_view previous;
  size_t at = kIndexHeaderSize;
  for (uint32_t i = 0; i < count; ++i) {
    if (body_end - at < kFixedEntrySize + 1) return Malformed("an entry is cut short");
    IndexEntry entry;
    entry.offset = at;
    uint32_t* fields[] = {&entry.ctime_sec, &entry.ctime_nsec, &entry.mtime_sec, &entry.mtime_nsec,
                          &entry.dev,       &entry.ino,        &entry.mode,      &entry.uid,
                          &entry.gid,       &entry.file_size};
    for (size_t f = 0; f < 10; ++f) *fields[f] = IndexBe32(data, at + 4 * f);
    entry.id = data.substr(at + 40, kIdSize);
    entry.flags = Be16(data, at + 60);
    size_t path_at = at + kFixedEntrySize;
    if ((entry.flags & kExtendedFlag) != 0) {
      if (out.version == 2) return Malformed("an extended entry in a version 2 index");
      if (body_end - path_at < 3) return Malformed("an entry is cut short");
      entry.flags_extended = Be16(data, path_at);
      path_at += 2;
    }
    if (v4) {
      size_t drop = TRY(ReadVarint(data, path_at, body_end));
      if (drop > previous.size()) return Malformed("a path drops more than the one before");
      size_t nul = data.find('\0', path_at);
      if (nul == std::string_view::npos || nul >= body_end)
        return Malformed("an entry has no path end");
      size_t start = paths.size();
      paths.append(previous.substr(0, previous.size() - drop));
      paths.append(data.substr(path_at, nul - path_at));
      spans.emplace_back(start, paths.size() - start);
      previous = std::string_view(paths).substr(start);
      entry.size = nul + 1 - at;
    } else {
      size_t nul = data.find('\0', path_at);
      if (nul == std::string_view::npos || nul >= body_end)
        return Malformed("an entry has no path end");
      entry.path = data.substr(path_at, nul - path_at);
      // One to eight NULs end the entry on a multiple of eight bytes.
      entry.size = (nul - at + 8) & ~size_t{7};
      if (body_end - at < entry.size) return Malformed("an entry is cut short");
    }
    size_t path_size = v4 ? spans.back().second : entry.path.size();
    if ((entry.flags & kNameMask) != kNameMask && path_size != (entry.flags & kNameMask))
      return Malformed("an entry's path length does not match its flags");
    out.entries.push_back(entry);
    at += entry.size;
  }
  if (v4) {
    for (size_t i = 0; i < out.entries.size(); ++i)
      out.entries[i].path = std::string_view(paths).substr(spans[i].first, spans[i].second);
  }
  for (size_t i = 1; i < out.entries.size(); ++i) {
    const IndexEntry& a = out.entries[i - 1];
    const IndexEntry& b = out.entries[i];
    if (b.path < a.path || (a.path == b.path && a.stage() >= b.stage()))
      return Malformed("entries out of order");
  }
  out.entries_end = at;

  out.cached_trees.reset();
  out.other_extensions.clear();
  while (at < body_end) {
    if (body_end - at < 8) return Malformed("an extension header is cut short");
    std::string_view signature = data.substr(at, 4);
    uint32_t size = IndexBe32(data, at + 4);
    if (body_end - at - 8 < size) return Malformed("an extension is cut short");
    if (signature == "TREE" && !out.cached_trees) {
      TreeReader reader(data.substr(at + 8, size));
      out.cached_trees = TRY(reader.Read(0));
      if (!reader.AtEnd()) return Malformed("bytes after the cached trees");
    } else {
      out.other_extensions.push_back(signature);
    }
    at += 8 + size;
  }
  return {};
}

}  // namespace berth::git
