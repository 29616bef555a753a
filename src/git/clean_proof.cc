#include "git/clean_proof.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "git/handles.h"
#include "git/index_file.h"
#include "sys/dir.h"
#include "sys/file_status.h"
#include "sys/mapped_file.h"

namespace berth::git {

namespace {

constexpr uint32_t kModeTypeMask = 0170000;
constexpr uint32_t kModeRegular = 0100000;
constexpr uint32_t kModeSymlink = 0120000;
constexpr uint32_t kModeGitlink = 0160000;

// What of the stat data git compares, from the repository's config; nullopt for settings
// this pass does not follow (case-insensitive names, no symlinks, a reduced core.checkStat).
struct StatRules {
  bool file_mode = true;    // core.fileMode: the owner's execute bit counts
  bool trust_ctime = true;  // core.trustctime
};

std::optional<StatRules> ReadStatRules(git_repository* repo) {
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo) != 0) return std::nullopt;
  Git2Ptr<git_config, git_config_free> config(raw);
  auto flag = [&](const char* name, bool fallback) -> std::optional<bool> {
    int value = 0;
    int code = git_config_get_bool(&value, config.get(), name);
    if (code == GIT_ENOTFOUND) return fallback;
    if (code != 0) return std::nullopt;
    return value != 0;
  };
  std::optional<bool> ignore_case = flag("core.ignorecase", false);
  std::optional<bool> symlinks = flag("core.symlinks", true);
  std::optional<bool> file_mode = flag("core.filemode", true);
  std::optional<bool> trust_ctime = flag("core.trustctime", true);
  if (!ignore_case || *ignore_case || !symlinks || !*symlinks || !file_mode || !trust_ctime)
    return std::nullopt;
  git_config_entry* check_stat = nullptr;
  if (git_config_get_entry(&check_stat, config.get(), "core.checkstat") == 0) {
    bool is_default = std::strcmp(check_stat->value, "default") == 0;
    git_config_entry_free(check_stat);
    if (!is_default) return std::nullopt;
  }
  return StatRules{*file_mode, *trust_ctime};
}

// The id of HEAD's tree (20 bytes), or nullopt (unborn HEAD, unreadable objects).
std::optional<std::string> HeadTreeId(git_repository* repo) {
  git_reference* raw_head = nullptr;
  if (git_repository_head(&raw_head, repo) != 0) return std::nullopt;
  ReferencePtr head(raw_head);
  git_object* raw_tree = nullptr;
  if (git_reference_peel(&raw_tree, head.get(), GIT_OBJECT_TREE) != 0) return std::nullopt;
  ObjectPtr tree(raw_tree);
  const git_oid* id = git_object_id(tree.get());
  return std::string(reinterpret_cast<const char*>(id->id), GIT_OID_RAWSZ);
}

// Whether an entry's stat data shows the file unchanged, as git's ie_match_stat decides with
// core.checkStat=default (nanoseconds compared too, which can only add doubt).
bool StatMatches(const IndexEntry& entry, const struct stat& st, const StatRules& rules) {
  const uint32_t type = entry.mode & kModeTypeMask;
  if (type == kModeRegular) {
    if (!S_ISREG(st.st_mode)) return false;
    if (rules.file_mode && ((entry.mode & 0100) != 0) != ((st.st_mode & S_IXUSR) != 0))
      return false;
  } else if (type == kModeSymlink) {
    if (!S_ISLNK(st.st_mode)) return false;
  } else {
    return false;
  }
  if (entry.mtime_sec != static_cast<uint32_t>(st.st_mtim.tv_sec) ||
      entry.mtime_nsec != static_cast<uint32_t>(st.st_mtim.tv_nsec))
    return false;
  if (rules.trust_ctime && (entry.ctime_sec != static_cast<uint32_t>(st.st_ctim.tv_sec) ||
                            entry.ctime_nsec != static_cast<uint32_t>(st.st_ctim.tv_nsec)))
    return false;
  return entry.ino == static_cast<uint32_t>(st.st_ino) && entry.uid == st.st_uid &&
         entry.gid == st.st_gid && entry.file_size == static_cast<uint32_t>(st.st_size);
}

// One directory of the walk: open while the entries under it are checked; the names the
// index has in it, to find the untracked ones when it is done.
struct Frame {
  std::string path;             // relative to the work tree, "" for the top, else ending in '/'
  std::optional<sys::Dir> dir;  // nullopt: missing (or not a directory)
  std::vector<std::string_view> tracked;
};

// A name the index does not have, found in a directory the walk listed: the tree is clean
// only if .gitignore ignores it (decided after the walk, by libgit2, on the calling thread).
struct Stray {
  std::string dir;  // the directory's path, as Frame::path
  std::string name;
};

// Checks the entries of one contiguous range of the index. Walks of several ranges may run at
// once (they make only system calls); a directory that has entries outside the range is
// left `shared`, to be listed once all its entries were seen.
class Walk {
 public:
  Walk(const StatRules& rules, int64_t index_mtime_sec, int64_t index_mtime_nsec)
      : rules_(rules), index_sec_(index_mtime_sec), index_nsec_(index_mtime_nsec) {}

  // `before` and `after`: the paths of the entries next to the range (empty at either end
  // of the index).
  bool Run(const std::string& workdir, std::span<const IndexEntry> entries, std::string_view before,
           std::string_view after) {
    before_ = before;
    after_ = after;
    Result<sys::Dir> top = sys::Dir::Open(workdir);
    if (!top.has_value()) return false;
    frames_.push_back(Frame{"", std::move(top).value(), {}});
    for (const IndexEntry& entry : entries) {
      if (!Enter(entry.path)) return false;
      if (!Check(entry)) return false;
    }
    while (!frames_.empty())
      if (!Leave()) return false;
    return true;
  }

  std::vector<Stray>& strays() { return strays_; }
  std::vector<Frame>& shared() { return shared_; }

  // Lists `frame`'s directory for the names the index does not have in it.
  bool FindStrays(Frame& frame) {
    if (!frame.dir) return true;  // what the index has under it was checked already
    Result<std::vector<std::string>> names = frame.dir->List();
    if (!names.has_value()) return false;
    std::sort(frame.tracked.begin(), frame.tracked.end());
    for (std::string& name : *names) {
      if (name == ".git") continue;
      if (std::binary_search(frame.tracked.begin(), frame.tracked.end(), std::string_view(name)))
        continue;
      strays_.push_back(Stray{frame.path, std::move(name)});
    }
    return true;
  }

 private:
  // Makes the frames the directories of `path`, leaving and entering as needed (the entries
  // are sorted, so each directory is entered once).
  bool Enter(std::string_view path) {
    while (frames_.size() > 1 && !path.starts_with(frames_.back().path))
      if (!Leave()) return false;
    size_t from = frames_.back().path.size();
    for (size_t slash = path.find('/', from); slash != std::string_view::npos;
         slash = path.find('/', from)) {
      Frame& parent = frames_.back();
      std::string_view name = path.substr(from, slash - from);
      parent.tracked.push_back(name);
      Frame frame{std::string(path.substr(0, slash + 1)), std::nullopt, {}};
      if (parent.dir) {
        Result<sys::Dir> opened = parent.dir->OpenDir(name);
        if (opened.has_value()) frame.dir = std::move(opened).value();
      }
      frames_.push_back(std::move(frame));
      from = slash + 1;
    }
    return true;
  }

  bool Check(const IndexEntry& entry) {
    Frame& frame = frames_.back();
    std::string_view name = entry.path.substr(frame.path.size());
    frame.tracked.push_back(name);
    if (entry.stage() != 0 || entry.intent_to_add()) return false;
    // Not in the work tree by design (a sparse checkout), trusted as unchanged, or a
    // submodule, which the count leaves out: no stat, as git does.
    if (entry.skip_worktree() || entry.assume_valid()) return true;
    if ((entry.mode & kModeTypeMask) == kModeGitlink) return true;
    if (!frame.dir) return false;
    // Racily clean: written in the same instant as the index, so its stat data cannot
    // tell a later change.
    if (entry.mtime_sec > index_sec_ ||
        (entry.mtime_sec == index_sec_ && entry.mtime_nsec >= index_nsec_))
      return false;
    Result<std::optional<struct stat>> st = frame.dir->StatIfExists(name);
    if (!st.has_value() || !*st) return false;
    return StatMatches(entry, **st, rules_);
  }

  // Done with the innermost directory: its strays now, or, when entries outside the range
  // lie in it too, once every range is done.
  bool Leave() {
    Frame frame = std::move(frames_.back());
    frames_.pop_back();
    bool shared = (!before_.empty() && before_.starts_with(frame.path)) ||
                  (!after_.empty() && after_.starts_with(frame.path));
    if (shared) {
      shared_.push_back(std::move(frame));
      return true;
    }
    return FindStrays(frame);
  }

  StatRules rules_;
  int64_t index_sec_;
  int64_t index_nsec_;
  std::string_view before_;
  std::string_view after_;
  std::vector<Frame> frames_;
  std::vector<Stray> strays_;
  std::vector<Frame> shared_;
};

// Whether the stray `name` in `dir` (at `path`) leaves the tree clean: it is ignored, or it
// is a directory in which nothing but ignored files and empty directories lie, which git
// does not list either. Past `budget` names looked at, it is doubt.
bool StrayIsClean(git_repository* repo, const sys::Dir& dir, const std::string& name,
                  const std::string& path, size_t& budget) {
  int ignored = 0;
  if (git_ignore_path_is_ignored(&ignored, repo, path.c_str()) != 0) return false;
  if (ignored != 0) return true;
  Result<sys::Dir> sub = dir.OpenDir(name);
  if (!sub.has_value()) return false;  // a file (or a symlink) git would list
  Result<std::vector<std::string>> names = sub->List();
  if (!names.has_value() || names->size() > budget) return false;
  budget -= names->size();
  for (const std::string& inner : *names)
    if (inner == ".git" || !StrayIsClean(repo, *sub, inner, path + "/" + inner, budget))
      return false;
  return true;
}

// Opens the directory `path` (as Frame::path) under `top` one name at a time, never through
// a symlink; nullopt when it cannot.
std::optional<sys::Dir> OpenBelow(const sys::Dir& top, std::string_view path) {
  Result<sys::Dir> dir = sys::Dir::Open(top.path());
  for (size_t from = 0, slash;
       dir.has_value() && (slash = path.find('/', from)) != std::string_view::npos;
       from = slash + 1)
    dir = dir->OpenDir(path.substr(from, slash - from));
  if (!dir.has_value()) return std::nullopt;
  return std::move(dir).value();
}

// How many threads stat the entries: one per core up to four, from 20,000 entries on (a
// thread costs about what a few hundred stats do).
size_t WalkThreads(size_t entries) {
  if (entries < 20000) return 1;
  return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
}

// The ranges' walks, then their shared directories and every stray, on this thread.
bool WalkAll(git_repository* repo, const std::string& workdir,
             const std::vector<IndexEntry>& entries, const StatRules& rules, int64_t index_sec,
             int64_t index_nsec, size_t threads) {
  std::vector<std::unique_ptr<Walk>> walks;
  for (size_t i = 0; i < threads; ++i)
    walks.push_back(std::make_unique<Walk>(rules, index_sec, index_nsec));
  std::vector<char> results(threads, 0);
  {
    std::vector<std::jthread> running;
    for (size_t i = 0; i < threads; ++i) {
      size_t begin = entries.size() * i / threads;
      size_t end = entries.size() * (i + 1) / threads;
      std::string_view before = begin > 0 ? entries[begin - 1].path : std::string_view();
      std::string_view after = end < entries.size() ? entries[end].path : std::string_view();
      auto range = std::span<const IndexEntry>(entries).subspan(begin, end - begin);
      auto run = [&, i, range, before, after] {
        results[i] = walks[i]->Run(workdir, range, before, after) ? 1 : 0;
      };
      if (i + 1 == threads)
        run();
      else
        running.emplace_back(run);
    }
  }
  for (char ok : results)
    if (ok == 0) return false;

  // A shared directory's tracked names come from every range that saw it.
  Walk& last = *walks.back();
  std::map<std::string, Frame> shared;
  for (const std::unique_ptr<Walk>& walk : walks) {
    for (Frame& frame : walk->shared()) {
      auto it = shared.try_emplace(frame.path, Frame{frame.path, std::nullopt, {}}).first;
      if (!it->second.dir) it->second.dir = std::move(frame.dir);
      it->second.tracked.insert(it->second.tracked.end(), frame.tracked.begin(),
                                frame.tracked.end());
    }
  }
  for (auto& [path, frame] : shared)
    if (!last.FindStrays(frame)) return false;

  Result<sys::Dir> top = sys::Dir::Open(workdir);
  if (!top.has_value()) return false;
  size_t budget = 256;
  for (const std::unique_ptr<Walk>& walk : walks) {
    for (const Stray& stray : walk->strays()) {
      std::optional<sys::Dir> dir = OpenBelow(*top, stray.dir);
      if (!dir || !StrayIsClean(repo, *dir, stray.name, stray.dir + stray.name, budget))
        return false;
    }
  }
  return true;
}

}  // namespace

bool ProveClean(git_repository* repo, const std::string& workdir, const std::string& gitdir,
                size_t threads) {
  std::optional<StatRules> rules = ReadStatRules(repo);
  if (!rules) return false;
  std::optional<std::string> head_tree = HeadTreeId(repo);
  if (!head_tree) return false;

  // The index's own mtime is read before its content: a newer index read after it only
  // makes more entries look racily clean.
  const std::string index_path = gitdir + "/index";
  std::optional<sys::FileStatus> index_status = sys::LinkStatus(index_path);
  if (!index_status || index_status->type != sys::FileType::kRegular) return false;
  Result<sys::MappedFile> mapped = sys::MappedFile::Open(index_path);
  if (!mapped.has_value()) return false;
  IndexFile index;
  if (!ReadIndexFile(mapped->data(), index).has_value()) return false;
  // A split or sparse index, whose entries mean something else; the optional extensions
  // (capitalized) change nothing here.
  for (std::string_view signature : index.other_extensions)
    if (signature[0] < 'A' || signature[0] > 'Z') return false;
  // Nothing staged: the cached tree of the whole index is HEAD's tree.
  if (!index.cached_trees || index.cached_trees->entries < 0 ||
      index.cached_trees->id != *head_tree)
    return false;

  if (threads == 0) threads = WalkThreads(index.entries.size());
  return WalkAll(repo, workdir, index.entries, *rules, index_status->mtime_sec,
                 index_status->mtime_nsec, threads);
}

}  // namespace berth::git
