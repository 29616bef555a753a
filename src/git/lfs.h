// Git LFS pointers and the local object store git-lfs keeps them in, read and written by berth
// itself: no filter, hook or command of any config runs (docs/workspace.md, "Git LFS").
//
// A pointer is the small blob git records in place of a large file's content:
//   version https://git-lfs.github.com/spec/v1
//   oid sha256:<64 hex>
//   size <bytes>
// and the content lives at <objects dir>/<hex[0:2]>/<hex[2:4]>/<hex>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace berth::git {

struct LfsPointer {
  std::string oid;  // sha256 of the content, 64 lower-case hex
  uint64_t size = 0;

  bool operator==(const LfsPointer&) const = default;
};

// The pointer `data` spells, or nullopt when it is not a valid pointer (the spec's rules:
// under 1024 bytes, `version` first, the other keys sorted, `oid sha256:` and `size` present,
// every line ended by '\n').
std::optional<LfsPointer> ParseLfsPointer(std::string_view data);
// The canonical text of a pointer, as git-lfs writes it.
std::string LfsPointerText(const LfsPointer& pointer);
// The pointer of `content`: its sha256 and size.
LfsPointer LfsPointerOf(std::string_view content);

// One repository's local LFS objects: <git common dir>/lfs/objects, or <lfs.storage>/objects
// when the repository's config sets lfs.storage (Repository::LfsObjectsDir).
class LfsStore {
 public:
  explicit LfsStore(std::string objects_dir) : dir_(std::move(objects_dir)) {}

  const std::string& dir() const { return dir_; }
  std::string PathOf(const std::string& oid) const;
  // The content of `pointer`, checked against its size and sha256; nullopt when the store
  // does not hold it, or holds something else under its name (a damaged or partial object).
  Result<std::optional<std::string>> Read(const LfsPointer& pointer) const;
  // Stores `content` (whose pointer is `pointer`) unless the store holds it already: written
  // to a temporary file and renamed into place, mode 0644 as git-lfs leaves its objects.
  Status Write(const LfsPointer& pointer, std::string_view content) const;

 private:
  std::string dir_;
};

}  // namespace berth::git
