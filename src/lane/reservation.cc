#include "lane/reservation.h"

#include "sys/exclusive_file.h"
#include "sys/fs.h"

namespace berth::lane {

namespace {

// Creates the missing ancestors of `path`, recording each one created, outermost first.
Status MakeParents(const std::string& path, std::vector<std::string>* created) {
  std::vector<std::string> missing;
  for (std::string dir = sys::Dirname(path);
       !dir.empty() && dir != "/" && sys::TypeOf(dir) == sys::FileType::kMissing;
       dir = sys::Dirname(dir))
    missing.insert(missing.begin(), dir);
  for (const std::string& dir : missing) {
    TRY(sys::MakeDirs(dir, 0700));
    created->push_back(dir);
  }
  return {};
}

void RollBack(const std::vector<std::string>& files, const std::vector<std::string>& dirs) {
  for (auto it = files.rbegin(); it != files.rend(); ++it)
    IgnoreError(sys::RemoveFile(*it), "a file we created and cannot remove is reported by name");
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
    IgnoreError(sys::RemoveDir(*it), "a directory that is not empty any more stays");
}

}  // namespace

Result<Reservation> Reservation::Reserve(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  std::vector<std::string> dirs;
  for (const std::string& path : paths) {
    Status made = MakeParents(path, &dirs);
    if (made) made = sys::CreateExclusive(path, 0600);
    if (!made) {
      RollBack(files, dirs);
      return made.error();
    }
    files.push_back(path);
  }
  return Reservation(paths);
}

Status Reservation::DropOutput() {
  if (paths_.empty()) return {};
  return sys::RemoveFile(paths_.front());
}

}  // namespace berth::lane
