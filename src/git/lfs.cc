#include "git/lfs.h"

#include <mbedtls/sha256.h>

#include "base/strings.h"
#include "git/handles.h"
#include "git/repository.h"
#include "sys/atomic_file.h"
#include "sys/file_status.h"
#include "sys/fs.h"

namespace berth::git {

namespace {

constexpr std::string_view kVersionLine = "version https://git-lfs.github.com/spec/v1\n";
// The version git-lfs wrote before it was renamed; git-lfs still reads it.
constexpr std::string_view kOldVersionLine = "version https://hawser.github.com/spec/v1\n";
constexpr size_t kMaxPointerSize = 1024;

bool IsLowerHex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[32];
  // Cannot fail for an in-memory buffer (mbedtls 2: the _ret variant reports only misuse).
  (void)mbedtls_sha256_ret(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest,
                           /*is224=*/0);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (unsigned char byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

}  // namespace

std::optional<LfsPointer> ParseLfsPointer(std::string_view data) {
  if (data.size() >= kMaxPointerSize) return std::nullopt;
  std::string_view rest;
  if (data.substr(0, kVersionLine.size()) == kVersionLine)
    rest = data.substr(kVersionLine.size());
  else if (data.substr(0, kOldVersionLine.size()) == kOldVersionLine)
    rest = data.substr(kOldVersionLine.size());
  else
    return std::nullopt;
  if (!rest.empty() && rest.back() != '\n') return std::nullopt;
  LfsPointer pointer;
  bool has_oid = false;
  bool has_size = false;
  std::string_view previous_key;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = rest.substr(end + 1);
    size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0) return std::nullopt;
    std::string_view key = line.substr(0, space);
    std::string_view value = line.substr(space + 1);
    if (key <= previous_key || key == "version") return std::nullopt;
    if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") != key.npos)
      return std::nullopt;
    previous_key = key;
    if (key == "oid") {
      constexpr std::string_view kPrefix = "sha256:";
      if (value.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
      std::string_view hex = value.substr(kPrefix.size());
      if (hex.size() != 64 || !IsLowerHex(hex)) return std::nullopt;
      pointer.oid = std::string(hex);
      has_oid = true;
    } else if (key == "size") {
      if (value.empty() || value.size() > 19 ||
          value.find_first_not_of("0123456789") != value.npos ||
          (value.size() > 1 && value[0] == '0'))
        return std::nullopt;
      pointer.size = std::stoull(std::string(value));
      has_size = true;
    }
  }
  if (!has_oid || !has_size) return std::nullopt;
  return pointer;
}

std::string LfsPointerText(const LfsPointer& pointer) {
  return std::string(kVersionLine) + "oid sha256:" + pointer.oid + "\nsize " +
         std::to_string(pointer.size) + "\n";
}

LfsPointer LfsPointerOf(std::string_view content) {
  return LfsPointer{Sha256Hex(content), content.size()};
}

std::string LfsStore::PathOf(const std::string& oid) const {
  return dir_ + "/" + oid.substr(0, 2) + "/" + oid.substr(2, 2) + "/" + oid;
}

Result<std::optional<std::string>> LfsStore::Read(const LfsPointer& pointer) const {
  std::string path = PathOf(pointer.oid);
  std::optional<sys::FileStatus> st = sys::LinkStatus(path);
  if (!st || st->type != sys::FileType::kRegular || st->size != pointer.size)
    return std::optional<std::string>();
  std::string content = TRY(sys::ReadFile(path));
  if (content.size() != pointer.size || Sha256Hex(content) != pointer.oid)
    return std::optional<std::string>();
  return std::optional<std::string>(std::move(content));
}

Status LfsStore::Write(const LfsPointer& pointer, std::string_view content) const {
  std::string path = PathOf(pointer.oid);
  if (TRY(Read(pointer))) return {};
  TRY(sys::MakeDirs(sys::Dirname(path), 0755));
  return sys::WriteFileAtomic(path, std::string(content), 0644);
}

std::string Repository::LfsObjectsDir() {
  // lfs.storage as git-lfs reads it: from the repository's own config (and the global files
  // git reads), a relative path resolved against the common git dir.
  std::string storage = common_dir() + "/lfs";
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, static_cast<git_repository*>(repo_)) == 0) {
    const char* value = nullptr;
    if (git_config_get_string(&value, raw, "lfs.storage") == 0 && value != nullptr && *value)
      storage = value[0] == '/' ? std::string(value) : common_dir() + "/" + value;
    git_config_free(raw);
  }
  return storage + "/objects";
}

Result<bool> Repository::IsLfsPathInWorktree(const std::string& path) {
  const char* value = nullptr;
  if (int code = git_attr_get(&value, static_cast<git_repository*>(repo_),
                              GIT_ATTR_CHECK_FILE_THEN_INDEX | GIT_ATTR_CHECK_NO_SYSTEM,
                              path.c_str(), "filter");
      code < 0)
    return Git2Error("read the attributes of " + path, code);
  return git_attr_value(value) == GIT_ATTR_VALUE_STRING && std::string_view(value) == "lfs";
}

}  // namespace berth::git
