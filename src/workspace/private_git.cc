#include "workspace/private_git.h"

#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::workspace {

std::string PrivateGitConfig() {
  // checkStat = minimal and trustctime = false: inside the overlay the files report the
  // overlay's device and the namespace's owner, which differ from the snapshot's stat data
  // in the index; mtime and size still match, so git trusts the index without rehashing.
  // hooksPath = /dev/null: no hook runs, even if the user's global config names a hooks dir.
  // gc.auto = 0: no background gc inside the sandbox.
  return "[core]\n"
         "\trepositoryformatversion = 0\n"
         "\tbare = false\n"
         "\tfilemode = true\n"
         "\tcheckStat = minimal\n"
         "\ttrustctime = false\n"
         "\tlogallrefupdates = false\n"
         "\thooksPath = /dev/null\n"
         "[gc]\n"
         "\tauto = 0\n";
}

Status MakeGitDir(const std::string& git_dir, const std::string& objects_dir,
                  const std::string& head, const std::string& index_from) {
  if (objects_dir.find('\n') != std::string::npos)
    return Error(Cause::kInvalidArgument, "the object directory path holds a newline");
  sys::Dir parent = TRY(sys::Dir::Open(git_dir.substr(0, git_dir.rfind('/'))));
  sys::Dir git = TRY(parent.MakeDir(git_dir.substr(git_dir.rfind('/') + 1), 0755));
  TRY(git.WriteNewFile("HEAD", head + "\n", 0644));
  TRY(git.WriteNewFile("config", PrivateGitConfig(), 0644));
  sys::Dir objects = TRY(git.MakeDir("objects", 0755));
  sys::Dir objects_info = TRY(objects.MakeDir("info", 0755));
  TRY(objects_info.WriteNewFile("alternates", objects_dir + "\n", 0644));
  TRY(objects.MakeDir("pack", 0755));
  sys::Dir refs = TRY(git.MakeDir("refs", 0755));
  TRY(refs.MakeDir("heads", 0755));
  TRY(refs.MakeDir("tags", 0755));
  sys::Dir info = TRY(git.MakeDir("info", 0755));
  TRY(info.WriteNewFile("exclude", "", 0644));
  if (index_from.empty()) return {};
  sys::Dir index_dir = TRY(sys::Dir::Open(sys::Dirname(index_from)));
  TRY(git.CopyFileFrom(index_dir, index_from.substr(index_from.rfind('/') + 1), "index"));
  return {};
}

Status MakePrivateGitDir(const std::string& git_dir, const std::string& objects_dir,
                         const Snapshot& snapshot, bool copy_index) {
  return MakeGitDir(git_dir, objects_dir, snapshot.commit,
                    copy_index ? snapshot.index_path : std::string());
}

}  // namespace berth::workspace
