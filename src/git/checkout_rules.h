// What Materialize and WriteLayer share: the entry names git refuses to check out, the one
// mtime of a snapshot's files, and the stat data an index entry carries.
#pragma once

#include <git2.h>
#include <sys/stat.h>

#include <ctime>
#include <string>
#include <string_view>

#include "base/result.h"

namespace berth::git {

// Git itself refuses to check out these names ('.git' in any case, '.', '..', anything with
// '/' or NUL); a tree holding one is corrupt or hostile. `parent` is for the message.
Status CheckEntryName(std::string_view name, const std::string& parent);

// The modification time of every file a snapshot writes: a whole second before now.
// Workspace indexes use core.checkStat=minimal, which compares only whole seconds of mtime;
// any later edit lands in a later second, so git in the workspace sees it without racy-git
// rehashing, and no entry is racily clean against an index written after the files.
struct timespec MaterializeStamp();

// Copies lstat data into an index entry, truncated to the index's 32-bit fields as git does.
void FillStat(git_index_entry& entry, const struct stat& st);

}  // namespace berth::git
