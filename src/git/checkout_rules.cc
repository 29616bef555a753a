#include "git/checkout_rules.h"

#include <git2/sys/index.h>

#include <chrono>

namespace berth::git {

namespace {

bool IsDotGit(std::string_view name) {
  return name.size() == 4 && name[0] == '.' && (name[1] | 0x20) == 'g' && (name[2] | 0x20) == 'i' &&
         (name[3] | 0x20) == 't';
}

}  // namespace

Status CheckEntryName(std::string_view name, const std::string& parent) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != name.npos ||
      name.find('\0') != name.npos || IsDotGit(name))
    return Error(Cause::kInvalidArgument, "the tree holds an entry git refuses to check out: '" +
                                              parent + std::string(name) + "'");
  return {};
}

struct timespec MaterializeStamp() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now).count();
  return timespec{static_cast<time_t>(seconds - 1), 0};
}

void FillStat(git_index_entry& entry, const struct stat& st) {
  entry.ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
  entry.ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  entry.mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
  entry.mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  entry.dev = static_cast<uint32_t>(st.st_dev);
  entry.ino = static_cast<uint32_t>(st.st_ino);
  entry.uid = static_cast<uint32_t>(st.st_uid);
  entry.gid = static_cast<uint32_t>(st.st_gid);
  entry.file_size = static_cast<uint32_t>(st.st_size);
}

}  // namespace berth::git
