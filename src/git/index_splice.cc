// SpliceIndex: the index read in place by ReadIndexFile (entry boundaries, paths and the
// cached-tree extension); every unchanged entry is copied as bytes.
#include "git/index_splice.h"

#include "git/index_file.h"

// The low-level SHA1_* calls, deprecated since OpenSSL 3.0 but kept: linked statically they
// bring only the SHA-1 code (its SHA-NI and AVX2 paths, about 2 GB/s here), where SHA1() and
// EVP go through the provider machinery (4 MB more, and slower); mbedtls's portable C runs at
// a quarter of that speed (bench/HISTORY.md, "derived snapshots (issue #13)").
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>

namespace berth::git {

namespace {

constexpr size_t kFixedEntrySize = 62;  // ten 32-bit stat fields, the object id, the flags
constexpr uint16_t kNameMask = 0x0fff;

void PutBe32(std::string& out, uint32_t value) {
  char bytes[4] = {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
                   static_cast<char>(value >> 8), static_cast<char>(value)};
  out.append(bytes, 4);
}

Error Malformed(const std::string& what) {
  return Error(Cause::kInternal, "the snapshot index is malformed: " + what, 0,
               "remove the snapshot with `berth gc --all` (or delete its directory) to rebuild it");
}

void AppendEntry(std::string& out, const git_index_entry& entry) {
  size_t start = out.size();
  for (uint32_t field : {static_cast<uint32_t>(entry.ctime.seconds), entry.ctime.nanoseconds,
                         static_cast<uint32_t>(entry.mtime.seconds), entry.mtime.nanoseconds,
                         entry.dev, entry.ino, entry.mode, entry.uid, entry.gid, entry.file_size})
    PutBe32(out, field);
  out.append(reinterpret_cast<const char*>(entry.id.id), GIT_OID_RAWSZ);
  size_t length = std::strlen(entry.path);
  auto flags = static_cast<uint16_t>(std::min<size_t>(length, kNameMask));
  out.push_back(static_cast<char>(flags >> 8));
  out.push_back(static_cast<char>(flags & 0xff));
  out.append(entry.path, length);
  // One to eight NULs: the entry ends on a multiple of eight bytes.
  size_t size = (kFixedEntrySize + length + 8) & ~size_t{7};
  out.append(start + size - out.size(), '\0');
}

// Marks invalid every cached tree on the way to `path`, as git does for a changed entry.
void Invalidate(CachedTree& root, std::string_view path) {
  CachedTree* tree = &root;
  tree->entries = -1;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    auto found = std::find_if(tree->subtrees.begin(), tree->subtrees.end(),
                              [&](const CachedTree& sub) { return sub.name == part; });
    if (found == tree->subtrees.end()) return;
    tree = &*found;
    tree->entries = -1;
    if (slash == std::string_view::npos) return;
    path.remove_prefix(slash + 1);
  }
}

void AppendTree(std::string& out, const CachedTree& tree) {
  out.append(tree.name);
  out.push_back('\0');
  out.append(std::to_string(tree.entries));
  out.push_back(' ');
  out.append(std::to_string(tree.subtrees.size()));
  out.push_back('\n');
  if (tree.entries >= 0) out.append(tree.id);
  for (const CachedTree& sub : tree.subtrees) AppendTree(out, sub);
}

}  // namespace

Result<std::optional<SplicedIndex>> SpliceIndex(std::string_view index,
                                                const std::vector<std::string>& removals,
                                                std::vector<git_index_entry> upserts) {
  // Version 4 (prefix-compressed paths) is left to the slow path before it is read.
  if (index.size() >= kIndexHeaderSize && IndexBe32(index, 4) == 4)
    return std::optional<SplicedIndex>();
  IndexFile file;
  if (Status read = ReadIndexFile(index, file); !read.has_value())
    return Malformed(read.error().message());
  // So are conflict stages and other extensions.
  if (!file.other_extensions.empty()) return std::optional<SplicedIndex>();
  for (const IndexEntry& entry : file.entries)
    if (entry.stage() != 0) return std::optional<SplicedIndex>();
  const std::vector<IndexEntry>& entries = file.entries;
  std::optional<CachedTree>& cached = file.cached_trees;

  std::sort(upserts.begin(), upserts.end(), [](const git_index_entry& a, const git_index_entry& b) {
    return std::strcmp(a.path, b.path) < 0;
  });
  std::vector<std::string_view> removed(removals.begin(), removals.end());
  std::sort(removed.begin(), removed.end());

  SplicedIndex out;
  std::string& fresh = out.fresh;
  fresh.reserve(kIndexHeaderSize + upserts.size() * 128);
  // Appends to `fresh`, or runs of the older file, merging a run with the one before it.
  auto take_fresh = [&](size_t from) {
    if (fresh.size() == from) return;
    SplicedIndex::Piece* last = out.pieces.empty() ? nullptr : &out.pieces.back();
    if (last != nullptr && last->fresh && last->offset + last->size == from)
      last->size += fresh.size() - from;
    else
      out.pieces.push_back({true, from, fresh.size() - from});
  };
  auto take_older = [&](const IndexEntry& entry) {
    SplicedIndex::Piece* last = out.pieces.empty() ? nullptr : &out.pieces.back();
    if (last != nullptr && !last->fresh && last->offset + last->size == entry.offset)
      last->size += entry.size;
    else
      out.pieces.push_back({false, entry.offset, entry.size});
  };
  auto append_upsert = [&](const git_index_entry& entry) {
    size_t from = fresh.size();
    AppendEntry(fresh, entry);
    take_fresh(from);
  };
  fresh.append(index.substr(0, kIndexHeaderSize));  // its entry count is set below
  take_fresh(0);
  uint32_t written = 0;
  auto upsert = upserts.begin();
  auto removal = removed.begin();
  for (const IndexEntry& entry : entries) {
    while (upsert != upserts.end() && std::string_view(upsert->path) < entry.path) {
      append_upsert(*upsert++);
      ++written;
    }
    if (upsert != upserts.end() && std::string_view(upsert->path) == entry.path) {
      append_upsert(*upsert++);
      ++written;
      continue;
    }
    while (removal != removed.end() && *removal < entry.path) ++removal;
    if (removal != removed.end() && *removal == entry.path) continue;
    take_older(entry);
    ++written;
  }
  for (; upsert != upserts.end(); ++upsert, ++written) append_upsert(*upsert);
  fresh[8] = static_cast<char>(written >> 24);
  fresh[9] = static_cast<char>(written >> 16);
  fresh[10] = static_cast<char>(written >> 8);
  fresh[11] = static_cast<char>(written);

  if (cached) {
    for (const std::string& path : removals) Invalidate(*cached, path);
    for (const git_index_entry& entry : upserts) Invalidate(*cached, entry.path);
    std::string tree;
    AppendTree(tree, *cached);
    size_t from = fresh.size();
    fresh.append("TREE");
    PutBe32(fresh, static_cast<uint32_t>(tree.size()));
    fresh.append(tree);
    take_fresh(from);
  }

  return std::optional<SplicedIndex>(std::move(out));
}

std::vector<std::string_view> SplicedIndex::Views(std::string_view older) const {
  std::vector<std::string_view> views;
  views.reserve(pieces.size());
  for (const Piece& piece : pieces)
    views.push_back(
        (piece.fresh ? std::string_view(fresh) : older).substr(piece.offset, piece.size));
  return views;
}

std::string SplicedIndex::Bytes(std::string_view older) const {
  std::string all;
  for (std::string_view view : Views(older)) all.append(view);
  return all;
}

std::string IndexChecksum(const std::vector<std::string_view>& body) {
  static_assert(kIndexChecksumSize == SHA_DIGEST_LENGTH);
  unsigned char checksum[kIndexChecksumSize];
  SHA_CTX context;
  // They fail only for a null context, which this is not.
  (void)SHA1_Init(&context);
  for (std::string_view piece : body) (void)SHA1_Update(&context, piece.data(), piece.size());
  (void)SHA1_Final(checksum, &context);
  return std::string(reinterpret_cast<const char*>(checksum), kIndexChecksumSize);
}

}  // namespace berth::git
