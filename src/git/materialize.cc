// Repository::Materialize and Repository::WriteIndex: a commit's tree as plain files, and the
// index that lets git inside a workspace of those files trust their stat data.
#include <git2.h>
#include <git2/sys/index.h>
#include <git2/sys/odb_backend.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "base/mutex.h"
#include "git/checkout_rules.h"
#include "git/handles.h"
#include "git/loose_object.h"
#include "git/pack_file.h"
#include "git/repository.h"
#include "sys/dir.h"
#include "sys/fs.h"
#include "sys/mapped_file.h"

namespace berth::git {

namespace {

git_repository* Raw(const Repository& repository) {
  return static_cast<git_repository*>(repository.raw());
}

// The files of a tree, to be written once every directory exists.
struct FileJob {
  uint32_t dir;      // index into DirectoryPass::dirs()
  std::string name;  // the entry's name in that directory
  git_oid oid;
  git_filemode_t mode;
};

// Pass one: creates every directory (one descriptor per level) and lists the files, those of
// one directory next to each other. Trees are read through the repository's object cache,
// which only this thread touches.
class DirectoryPass {
 public:
  explicit DirectoryPass(git_repository* repo) : repo_(repo) { dirs_.emplace_back(); }

  Status Walk(const git_tree* tree, const sys::Dir& dir, const std::string& prefix) {
    // The files and submodules first, so that a directory's files form one run.
    auto index = static_cast<uint32_t>(dirs_.size() - 1);
    size_t count = git_tree_entrycount(tree);
    for (size_t i = 0; i < count; ++i) {
      const git_tree_entry* entry = git_tree_entry_byindex(tree, i);
      std::string_view name = git_tree_entry_name(entry);
      TRY(CheckEntryName(name, prefix));
      git_filemode_t mode = git_tree_entry_filemode(entry);
      switch (mode) {
        case GIT_FILEMODE_TREE:
          break;
        case GIT_FILEMODE_BLOB:
        case GIT_FILEMODE_BLOB_EXECUTABLE:
        case GIT_FILEMODE_LINK:
          files_.push_back(FileJob{index, std::string(name), *git_tree_entry_id(entry), mode});
          break;
        case GIT_FILEMODE_COMMIT:  // a submodule: an empty directory, as git leaves it
          TRY(dir.MakeDir(name, 0755));
          break;
        default:
          return Error(Cause::kInvalidArgument,
                       "unknown mode of " + prefix + std::string(name) + " in the tree");
      }
    }
    for (size_t i = 0; i < count; ++i) {
      const git_tree_entry* entry = git_tree_entry_byindex(tree, i);
      if (git_tree_entry_filemode(entry) != GIT_FILEMODE_TREE) continue;
      std::string_view name = git_tree_entry_name(entry);
      std::string path = prefix + std::string(name);
      git_tree* subtree = nullptr;
      if (int code = git_tree_lookup(&subtree, repo_, git_tree_entry_id(entry)); code < 0)
        return Git2Error("read tree " + path, code);
      TreePtr owned(subtree);
      sys::Dir child = TRY(dir.MakeDir(name, 0755));
      dirs_.push_back(path);
      TRY(Walk(subtree, child, path + "/"));
    }
    return {};
  }

  // Relative to the materialized root, without a trailing slash; dirs()[0] is the root ("").
  const std::vector<std::string>& dirs() const { return dirs_; }
  const std::vector<FileJob>& files() const { return files_; }

 private:
  git_repository* repo_;
  std::vector<std::string> dirs_;
  std::vector<FileJob> files_;
};

// Reads blobs from the object database's backends directly. git_odb_read also hashes every
// object again (libgit2's strict hash verification, with collision detection), which costs
// two thirds as much as inflating it; git's own checkout does not. Inflating still checks zlib's
// checksum and applying a delta its sizes, and a damaged snapshot never reaches a result
// (docs/workspace.md, "Snapshots"). An object no backend has falls back to git_odb_read,
// which refreshes the list of packs and reports the error.
//
// A loose object of the repository's own store is streamed (docs/workspace.md, "Large
// files"): its file is inflated with zlib a piece at a time into one buffer per thread
// (loose_object.h), and each piece written while it is still in the processor's cache.
// Taking it whole instead reads the compressed file into one fresh buffer and inflates it into
// a second, every page of both faulted in and zeroed, and writes it from memory long out of
// the cache: for a 100 MiB blob that was three times git's time, and the memory grows with the
// file. libgit2 1.5's own stream (the loose backend's readstream) is not used: on a truncated
// object it, like its whole read, calls inflate forever. A plain (undeltified) blob of one of
// the store's own packs is streamed the same way out of the mapped pack (pack_file.h):
// libgit2 1.5's pack backend has no stream. A deltified blob, one in an alternate, and one
// of a pack berth does not read are read whole through libgit2.
class BlobReader {
 public:
  BlobReader(git_odb* odb, const PackSet& packs) : odb_(odb), packs_(packs) {
    size_t count = git_odb_num_backends(odb);
    for (size_t i = 0; i < count; ++i) {
      git_odb_backend* backend = nullptr;
      if (git_odb_get_backend(&backend, odb, i) == 0 &&
          (backend->read != nullptr || backend->readstream != nullptr))
        backends_.push_back(backend);
    }
  }

  // Hands the blob `oid`, the file `name` of `dir` (for messages), to `streamed` in pieces when
  // it is a plain blob entry of the repository's own packs or a loose object of its own
  // objects directory `loose_dir`, else whole to `whole` (valid until the next call). The
  // packs are asked first, as libgit2 does; then the backends in libgit2's order. One
  // BlobReader per thread.
  Status Emit(const git_oid& oid, const sys::Dir& dir, std::string_view name,
              const std::string& loose_dir, const PieceSink& streamed,
              const std::function<Status(std::string_view)>& whole) {
    Release();
    if (std::optional<PackSet::Found> found = packs_.Find(oid.id)) {
      Result<PackEntryHeader> header = ParsePackEntryHeader(found->pack, found->entry.offset);
      // A delta, or a header berth does not read: libgit2's pack backend decides.
      if (header && header->type == PackEntryHeader::kBlob) {
        if (buffer_ == nullptr) buffer_ = std::make_unique<char[]>(kPieceSize);
        return StreamPackedBlob(found->pack, found->entry, *header, buffer_.get(), dir.PathOf(name),
                                streamed);
      }
    }
    bool own_loose_tried = false;
    for (git_odb_backend* backend : backends_) {
      // The first loose backend is the repository's own (libgit2 sorts alternates last).
      if (backend->readstream != nullptr && !own_loose_tried) {
        own_loose_tried = true;
        char hex[GIT_OID_HEXSZ + 1];
        git_oid_tostr(hex, sizeof(hex), &oid);
        std::string path = loose_dir + "/" + std::string(hex, 2) + "/" + (hex + 2);
        Result<std::string_view> file =
            sys::MappedFile::ReadOrMap(path, kMapFrom, compressed_, mapped_);
        if (!file && file.error().sys_errno() != ENOENT) return std::move(file).error();
        if (file && LooksLikeZlib(*file)) {
          if (buffer_ == nullptr) buffer_ = std::make_unique<char[]>(kPieceSize);
          Status written = StreamLooseBlob(*file, buffer_.get(), dir.PathOf(name), streamed);
          mapped_ = sys::MappedFile();
          return written;
        }
        mapped_ = sys::MappedFile();
        // Missing, or in the old format libgit2 still reads: its backend decides.
      }
      if (backend->read == nullptr) continue;
      std::optional<std::string_view> data = TRY(ReadFrom(backend, oid, dir, name));
      if (data) return whole(*data);
    }
    return whole(TRY(ReadFallback(oid, dir, name)));
  }

  ~BlobReader() { Release(); }
  BlobReader(const BlobReader&) = delete;
  BlobReader& operator=(const BlobReader&) = delete;

  // Loose object files from this size on are mapped rather than read into a buffer.
  static constexpr size_t kMapFrom = 1024 * 1024;

 private:
  // The blob from one backend, or nullopt when that backend does not have it.
  Result<std::optional<std::string_view>> ReadFrom(git_odb_backend* backend, const git_oid& oid,
                                                   const sys::Dir& dir, std::string_view name) {
    void* data = nullptr;
    size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    int code = backend->read(&data, &size, &type, backend, &oid);
    if (code == GIT_ENOTFOUND || code == GIT_PASSTHROUGH) return std::optional<std::string_view>();
    if (code < 0) return Git2Error("read blob " + dir.PathOf(name), code);
    data_ = data;
    owner_ = backend;
    if (type != GIT_OBJECT_BLOB)
      return Error(Cause::kInvalidArgument,
                   "the tree names a non-blob as the file " + dir.PathOf(name));
    return std::optional<std::string_view>(std::string_view(static_cast<const char*>(data), size));
  }

  Result<std::string_view> ReadFallback(const git_oid& oid, const sys::Dir& dir,
                                        std::string_view name) {
    git_odb_object* raw = nullptr;
    // git_error_last() is per thread, so the message is taken here.
    if (int code = git_odb_read(&raw, odb_, &oid); code < 0)
      return Git2Error("read blob " + dir.PathOf(name), code);
    object_.reset(raw);
    if (git_odb_object_type(raw) != GIT_OBJECT_BLOB)
      return Error(Cause::kInvalidArgument,
                   "the tree names a non-blob as the file " + dir.PathOf(name));
    return std::string_view(static_cast<const char*>(git_odb_object_data(raw)),
                            git_odb_object_size(raw));
  }

  void Release() {
    if (data_ != nullptr) git_odb_backend_data_free(owner_, data_);
    data_ = nullptr;
    object_.reset();
  }

  git_odb* odb_;
  const PackSet& packs_;
  std::vector<git_odb_backend*> backends_;
  void* data_ = nullptr;
  git_odb_backend* owner_ = nullptr;
  OdbObjectPtr object_;
  std::unique_ptr<char[]> buffer_;  // kPieceSize bytes, made for the first streamed file
  std::string compressed_;          // the last small loose object file read
  sys::MappedFile mapped_;          // a large one, while it is written
};

// Pass two: writes the files from several threads. File creation dominates the cost, and the
// kernel creates files in different directories in parallel; git_odb is thread-safe
// (libgit2 docs/threading.md) and the root descriptor is only used by *at() calls.
class FilePass {
 public:
  FilePass(git_odb* odb, std::string loose_dir, const PackSet& packs, const sys::Dir& root,
           const DirectoryPass& pass, const struct timespec& stamp)
      : odb_(odb),
        loose_dir_(std::move(loose_dir)),
        packs_(packs),
        root_(root),
        dirs_(pass.dirs()),
        files_(pass.files()),
        stamp_(stamp) {
    // Runs of at most kChunk files of one directory: a thread opens the directory once per
    // run and creates the files by name, and two threads rarely contend for one directory.
    for (size_t i = 0; i < files_.size(); ++i)
      if (runs_.empty() || files_[i].dir != files_[runs_.back()].dir || i - runs_.back() == kChunk)
        runs_.push_back(i);
    runs_.push_back(files_.size());
  }

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
  static constexpr size_t kChunk = 256;

  void Work() {
    BlobReader reader(odb_, packs_);
    while (!failed_.load(std::memory_order_relaxed)) {
      size_t run = next_.fetch_add(1, std::memory_order_relaxed);
      if (run + 1 >= runs_.size()) return;
      Status written = WriteRun(reader, runs_[run], runs_[run + 1]);
      if (!written) {
        MutexLock lock(mutex_);
        if (!error_) error_ = std::move(written).error();
        failed_ = true;
        return;
      }
    }
  }

  Status WriteRun(BlobReader& reader, size_t first, size_t end) {
    const std::string& dir_path = dirs_[files_[first].dir];
    std::optional<sys::Dir> opened;
    if (!dir_path.empty()) opened = TRY(root_.OpenDir(dir_path));
    const sys::Dir& dir = opened ? *opened : root_;
    for (size_t i = first; i < end; ++i) TRY(Write(reader, dir, files_[i]));
    return {};
  }

  Status Write(BlobReader& reader, const sys::Dir& dir, const FileJob& file) {
    if (file.mode == GIT_FILEMODE_LINK) {
      auto link = [&](std::string_view target) {
        return dir.MakeSymlink(std::string(target), file.name);
      };
      auto link_pieces = [&](const Pieces& next) -> Status {
        std::string target;
        for (;;) {
          std::string_view piece = TRY(next());
          if (piece.empty()) break;
          target.append(piece);
        }
        return link(target);
      };
      TRY(reader.Emit(file.oid, dir, file.name, loose_dir_, link_pieces, link));
      return dir.SetTimes(file.name, stamp_, stamp_);
    }
    mode_t mode = file.mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644;
    return reader.Emit(
        file.oid, dir, file.name, loose_dir_,
        [&](const Pieces& next) { return dir.WriteNewFileFrom(file.name, mode, &stamp_, next); },
        [&](std::string_view data) { return dir.WriteNewFile(file.name, data, mode, &stamp_); });
  }

  git_odb* odb_;
  const std::string loose_dir_;
  const PackSet& packs_;
  const sys::Dir& root_;
  const std::vector<std::string>& dirs_;
  const std::vector<FileJob>& files_;
  std::vector<size_t> runs_;  // the first file of each run, then files_.size()
  const struct timespec stamp_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  Mutex mutex_;
  std::optional<Error> error_ GUARDED_BY(mutex_);
};

// Below this many entries per thread, WriteIndex's stat calls stay on fewer threads.
constexpr size_t kStatsPerThread = 4096;

// Fills in the stat data of `entries` [first, end) from the files under `root`. Each file is
// stat'ed by name in its open directory: neighbours in index order mostly share one, and
// looking up one name is cheaper than walking the whole path.
Status StatEntries(const sys::Dir& root, const std::vector<git_index_entry*>& entries, size_t first,
                   size_t end) {
  std::string parent_path;
  std::optional<sys::Dir> parent;
  for (size_t i = first; i < end; ++i) {
    git_index_entry* entry = entries[i];
    if (entry->mode == GIT_FILEMODE_COMMIT) continue;  // a submodule: no stat data
    std::string_view path = entry->path;
    size_t slash = path.rfind('/');
    std::string_view parent_of = slash == path.npos ? "" : path.substr(0, slash);
    if (!parent || parent_of != parent_path) {
      parent = parent_of.empty() ? TRY(sys::Dir::Open(root.path())) : TRY(root.OpenDir(parent_of));
      parent_path = parent_of;
    }
    struct stat st = TRY(parent->Stat(path.substr(slash + 1)));
    FillStat(*entry, st);
  }
  return {};
}

}  // namespace

Status Repository::Materialize(const std::string& commit, const std::string& dir,
                               bool git_mount_point) {
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
  // Mapped once for every thread; listed after the tree was read, so that a repack since
  // then leaves at worst an object libgit2 finds.
  PackSet packs = PackSet::Open(objects_);
  TRY(FilePass(odb, objects_, packs, root, directories, stamp).Run());
  // The mount point of the job's private git dir.
  if (git_mount_point) TRY(root.MakeDir(".git", 0755));
  return {};
}

Status Repository::WriteIndex(const std::string& commit, const std::string& dir,
                              const std::string& index_path) {
  TreePtr tree = TRY(LookupCommitTree(Raw(*this), commit));
  if (sys::Exists(index_path))
    return Error(Cause::kInvalidArgument, "the index " + index_path + " already exists");
  git_index* raw_index = nullptr;
  if (int code = git_index_open(&raw_index, index_path.c_str()); code < 0)
    return Git2Error("create the index " + index_path, code);
  IndexPtr index(raw_index);
  // One call builds every entry (blobs, symlinks, submodules) in index order, and the cache
  // of tree ids; adding the entries one by one checks each against all the others.
  if (int code = git_index_read_tree(index.get(), tree.get()); code < 0)
    return Git2Error("read the tree of " + commit + " into the index", code);

  // The entries belong to the index and are not const; libgit2 hands them out as const so
  // that their paths and stages (its keys) stay put. The stat fields are plain data, filled
  // in by a few threads, each entry by one thread, without calling into libgit2.
  std::vector<git_index_entry*> entries(git_index_entrycount(index.get()));
  for (size_t i = 0; i < entries.size(); ++i)
    entries[i] = const_cast<git_index_entry*>(git_index_get_byindex(index.get(), i));
  sys::Dir root = TRY(sys::Dir::Open(dir));
  size_t count = entries.size();
  size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  threads = std::min(threads, count / kStatsPerThread + 1);
  std::vector<Status> results(threads);
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) {
    size_t first = count * t / threads;
    size_t end = count * (t + 1) / threads;
    try {
      workers.emplace_back(
          [&, t, first, end] { results[t] = StatEntries(root, entries, first, end); });
    } catch (const std::system_error&) {
      results[t] = StatEntries(root, entries, first, end);  // no thread: done here
    }
  }
  results[0] = StatEntries(root, entries, 0, count / threads);
  for (std::thread& worker : workers) worker.join();
  for (Status& result : results) TRY(std::move(result));

  if (int code = git_index_write(index.get()); code < 0)
    return Git2Error("write the index " + index_path, code);
  return {};
}

}  // namespace berth::git
