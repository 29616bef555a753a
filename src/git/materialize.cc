// Repository::Materialize and Repository::WriteIndex: a commit's tree as plain files, and the
// index that lets git inside a workspace of those files trust their stat data.
#include <git2.h>
#include <git2/sys/index.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <optional>
#include <system_error>
#include <thread>

#include "base/mutex.h"
#include "git/checkout_rules.h"
#include "git/handles.h"
#include "git/repository.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::git {

namespace {

git_repository* Raw(const Repository& repository) {
  return static_cast<git_repository*>(repository.raw());
}

// The files of a tree, to be written once every directory exists.
struct FileJob {
  std::string path;  // relative to the materialized root
  git_oid oid;
  git_filemode_t mode;
};

// Pass one: creates every directory (one descriptor per level) and lists the files. Trees are
// read through the repository's object cache, which only this thread touches.
class DirectoryPass {
 public:
  explicit DirectoryPass(git_repository* repo) : repo_(repo) {}

  Status Walk(const git_tree* tree, const sys::Dir& dir, const std::string& prefix) {
    size_t count = git_tree_entrycount(tree);
    for (size_t i = 0; i < count; ++i) {
      const git_tree_entry* entry = git_tree_entry_byindex(tree, i);
      std::string_view name = git_tree_entry_name(entry);
      TRY(CheckEntryName(name, prefix));
      std::string path = prefix + std::string(name);
      git_filemode_t mode = git_tree_entry_filemode(entry);
      switch (mode) {
        case GIT_FILEMODE_TREE: {
          git_tree* subtree = nullptr;
          if (int code = git_tree_lookup(&subtree, repo_, git_tree_entry_id(entry)); code < 0)
            return Git2Error("read tree " + path, code);
          TreePtr owned(subtree);
          sys::Dir child = TRY(dir.MakeDir(name, 0755));
          TRY(Walk(subtree, child, path + "/"));
          break;
        }
        case GIT_FILEMODE_BLOB:
        case GIT_FILEMODE_BLOB_EXECUTABLE:
        case GIT_FILEMODE_LINK:
          files_.push_back(FileJob{std::move(path), *git_tree_entry_id(entry), mode});
          break;
        case GIT_FILEMODE_COMMIT:  // a submodule: an empty directory, as git leaves it
          TRY(dir.MakeDir(name, 0755));
          break;
        default:
          return Error(Cause::kInvalidArgument, "unknown mode of " + path + " in the tree");
      }
    }
    return {};
  }

  std::vector<FileJob>& files() { return files_; }

 private:
  git_repository* repo_;
  std::vector<FileJob> files_;
};

// Pass two: writes the files from several threads. File creation dominates the cost, and the
// kernel creates files in different directories in parallel; git_odb is thread-safe
// (libgit2 docs/threading.md) and the root descriptor is only used by *at() calls.
class FilePass {
 public:
  FilePass(git_odb* odb, const sys::Dir& root, const std::vector<FileJob>& files,
           const struct timespec& stamp)
      : odb_(odb), root_(root), files_(files), stamp_(stamp) {}

  Status Run() {
    size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    threads = std::min(threads, files_.size() / kFilesPerThread + 1);
    std::vector<std::thread> workers;
    for (size_t i = 1; i < threads; ++i) {
      // std::thread reports a failure to start (EAGAIN) by throwing; the exception ends
      // here and the threads already running do the work.
      try {
        workers.emplace_back([this] { Work(); });
      } catch (const std::system_error&) {
        break;
      }
    }
    Work();
    for (std::thread& worker : workers) worker.join();
    MutexLock lock(mutex_);
    if (error_) return std::move(*error_);
    return {};
  }

 private:
  static constexpr size_t kFilesPerThread = 512;
  // Threads claim runs of consecutive files, which mostly share a directory, so that they
  // rarely contend for the same directory's lock.
  static constexpr size_t kChunk = 64;

  void Work() {
    while (!failed_.load(std::memory_order_relaxed)) {
      size_t first = next_.fetch_add(kChunk, std::memory_order_relaxed);
      if (first >= files_.size()) return;
      for (size_t i = first; i < files_.size() && i < first + kChunk; ++i) {
        Status written = Write(files_[i]);
        if (!written) {
          MutexLock lock(mutex_);
          if (!error_) error_ = std::move(written).error();
          failed_ = true;
          return;
        }
      }
    }
  }

  Status Write(const FileJob& file) {
    git_odb_object* raw = nullptr;
    // git_error_last() is per thread, so the message is taken here.
    if (int code = git_odb_read(&raw, odb_, &file.oid); code < 0)
      return Git2Error("read blob " + file.path, code);
    OdbObjectPtr object(raw);
    std::string_view data(static_cast<const char*>(git_odb_object_data(object.get())),
                          git_odb_object_size(object.get()));
    if (file.mode == GIT_FILEMODE_LINK) {
      TRY(root_.MakeSymlink(std::string(data), file.path));
      return root_.SetTimes(file.path, stamp_, stamp_);
    }
    mode_t mode = file.mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644;
    return root_.WriteNewFile(file.path, data, mode, &stamp_);
  }

  git_odb* odb_;
  const sys::Dir& root_;
  const std::vector<FileJob>& files_;
  const struct timespec stamp_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  Mutex mutex_;
  std::optional<Error> error_ GUARDED_BY(mutex_);
};

struct IndexSource {
  std::string path;
  git_oid oid;
  uint32_t mode;
};

int CollectIndexSource(const char* root, const git_tree_entry* entry, void* payload) {
  auto* out = static_cast<std::vector<IndexSource>*>(payload);
  git_object_t type = git_tree_entry_type(entry);
  if (type != GIT_OBJECT_BLOB && type != GIT_OBJECT_COMMIT) return 0;
  out->push_back(IndexSource{std::string(root) + git_tree_entry_name(entry),
                             *git_tree_entry_id(entry),
                             static_cast<uint32_t>(git_tree_entry_filemode(entry))});
  return 0;
}

}  // namespace

Status Repository::Materialize(const std::string& commit, const std::string& dir) {
  struct timespec stamp = MaterializeStamp();
  TreePtr tree = TRY(LookupCommitTree(Raw(*this), commit));
  git_odb* odb = nullptr;
  if (int code = git_repository_odb(&odb, Raw(*this)); code < 0)
    return Git2Error("open the object database", code);
  OdbPtr owned_odb(odb);
  TRY(sys::MakeDirs(dir, 0755));
  sys::Dir root = TRY(sys::Dir::Open(dir));
  DirectoryPass directories(Raw(*this));
  TRY(directories.Walk(tree.get(), root, ""));
  TRY(FilePass(odb, root, directories.files(), stamp).Run());
  // The mount point of the job's private git dir.
  TRY(root.MakeDir(".git", 0755));
  return {};
}

Status Repository::WriteIndex(const std::string& commit, const std::string& dir,
                              const std::string& index_path) {
  TreePtr tree = TRY(LookupCommitTree(Raw(*this), commit));
  std::vector<IndexSource> sources;
  if (int code = git_tree_walk(tree.get(), GIT_TREEWALK_PRE, CollectIndexSource, &sources);
      code < 0)
    return Git2Error("walk the tree of " + commit, code);
  // Index order is bytewise by path; adding in that order appends without moving entries.
  std::sort(sources.begin(), sources.end(),
            [](const IndexSource& a, const IndexSource& b) { return a.path < b.path; });

  if (sys::Exists(index_path))
    return Error(Cause::kInvalidArgument, "the index " + index_path + " already exists");
  git_index* raw_index = nullptr;
  if (int code = git_index_open(&raw_index, index_path.c_str()); code < 0)
    return Git2Error("create the index " + index_path, code);
  IndexPtr index(raw_index);
  sys::Dir root = TRY(sys::Dir::Open(dir));
  for (const IndexSource& source : sources) {
    git_index_entry entry = {};
    if (source.mode != GIT_FILEMODE_COMMIT) {
      struct stat st = TRY(root.Stat(source.path));
      FillStat(entry, st);
    }
    entry.mode = source.mode;
    entry.id = source.oid;
    entry.path = source.path.c_str();
    if (int code = git_index_add(index.get(), &entry); code < 0)
      return Git2Error("add " + source.path + " to the index", code);
  }
  if (int code = git_index_write(index.get()); code < 0)
    return Git2Error("write the index " + index_path, code);
  return {};
}

}  // namespace berth::git
