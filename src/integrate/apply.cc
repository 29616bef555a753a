#include "integrate/apply.h"

#include "sys/atomic_file.h"
#include "sys/file_status.h"
#include "sys/fs.h"

namespace berth::integrate {

namespace {

Status Write(const FileEdit& edit) {
  // Through a symbolic link to the file it names, so that the link stays a link.
  std::string target = edit.path;
  if (sys::TypeOf(edit.path) == sys::FileType::kSymlink)
    target = TRY_CTX(sys::RealPath(edit.path), "resolving " + edit.path);
  uint32_t mode = edit.mode;
  if (std::optional<sys::FileStatus> status = sys::LinkStatus(target)) mode = status->permissions;
  TRY_CTX(sys::MakeDirs(sys::Dirname(target), 0755), "creating the directory of " + target);
  TRY_CTX(sys::WriteFileAtomic(target, *edit.after, mode), "writing " + target);
  return {};
}

Status Remove(const FileEdit& edit) {
  TRY_CTX(sys::RemoveFile(edit.path), "removing " + edit.path);
  if (edit.prune_up_to.empty()) return {};
  for (std::string dir = sys::Dirname(edit.path); sys::IsWithin(dir, edit.prune_up_to);
       dir = sys::Dirname(dir)) {
    // A directory that still holds something is not berth's to remove: stop there.
    if (!sys::RemoveDir(dir)) break;
    if (dir == edit.prune_up_to) break;
  }
  return {};
}

}  // namespace

Status Apply(const std::vector<FileEdit>& edits) {
  for (const FileEdit& edit : edits) {
    switch (edit.action()) {
      case Action::kUnchanged:
        break;
      case Action::kCreate:
      case Action::kChange:
        TRY(Write(edit));
        break;
      case Action::kRemove:
        TRY(Remove(edit));
        break;
    }
  }
  return {};
}

}  // namespace berth::integrate
