#include "git/object_batch.h"

#include <git2/sys/odb_backend.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace berth::git {

namespace {

// Above every backend git_odb_open adds, so that writes come here first.
constexpr int kMemoryPriority = 1000;

// The objects written while a batch is open, in memory, in the order they were written.
// (libgit2's own mempack backend packs only what its commits reach, walking their whole
// trees: every object of the repository for one new commit.)
struct MemoryBackend {
  git_odb_backend parent;  // first: libgit2 hands back a pointer to it
  struct Object {
    git_oid id;
    git_object_t type;
    std::string data;
  };
  std::vector<Object> objects;
  std::unordered_map<std::string, size_t> index;  // raw id bytes -> position in objects

  static std::string Key(const git_oid* id) {
    return std::string(reinterpret_cast<const char*>(id->id), GIT_OID_RAWSZ);
  }

  static MemoryBackend* Of(git_odb_backend* backend) {
    return reinterpret_cast<MemoryBackend*>(backend);
  }
  const Object* Find(const git_oid* id) const {
    auto found = index.find(Key(id));
    return found == index.end() ? nullptr : &objects[found->second];
  }

  static int Read(void** data, size_t* size, git_object_t* type, git_odb_backend* backend,
                  const git_oid* id) {
    const Object* object = Of(backend)->Find(id);
    if (object == nullptr) return GIT_ENOTFOUND;
    *data = git_odb_backend_data_alloc(backend, object->data.size());
    if (*data == nullptr) return -1;
    if (!object->data.empty()) std::memcpy(*data, object->data.data(), object->data.size());
    *size = object->data.size();
    *type = object->type;
    return 0;
  }
  static int ReadHeader(size_t* size, git_object_t* type, git_odb_backend* backend,
                        const git_oid* id) {
    const Object* object = Of(backend)->Find(id);
    if (object == nullptr) return GIT_ENOTFOUND;
    *size = object->data.size();
    *type = object->type;
    return 0;
  }
  static int Write(git_odb_backend* backend, const git_oid* id, const void* data, size_t size,
                   git_object_t type) {
    MemoryBackend* self = Of(backend);
    if (self->index.emplace(Key(id), self->objects.size()).second)
      self->objects.push_back({*id, type, std::string(static_cast<const char*>(data), size)});
    return 0;
  }
  static int Exists(git_odb_backend* backend, const git_oid* id) {
    return Of(backend)->Find(id) != nullptr ? 1 : 0;
  }
  static void Free(git_odb_backend* backend) { delete Of(backend); }
};

MemoryBackend* NewMemoryBackend() {
  auto* backend = new MemoryBackend();
  git_odb_init_backend(&backend->parent, GIT_ODB_BACKEND_VERSION);
  backend->parent.read = &MemoryBackend::Read;
  backend->parent.read_header = &MemoryBackend::ReadHeader;
  backend->parent.write = &MemoryBackend::Write;
  backend->parent.exists = &MemoryBackend::Exists;
  backend->parent.free = &MemoryBackend::Free;
  return backend;
}

using PackBuilderPtr = Git2Ptr<git_packbuilder, git_packbuilder_free>;

}  // namespace

Result<ObjectBatch> ObjectBatch::Open(git_repository* repo) {
  const std::string objects = std::string(git_repository_commondir(repo)) + "objects";
  git_odb* raw_odb = nullptr;
  if (int code = git_odb_open(&raw_odb, objects.c_str()); code < 0)
    return Git2Error("open the objects of " + objects, code);
  OdbPtr odb(raw_odb);
  MemoryBackend* memory = NewMemoryBackend();
  if (int code = git_odb_add_backend(odb.get(), &memory->parent, kMemoryPriority); code < 0) {
    MemoryBackend::Free(&memory->parent);
    return Git2Error("start an object batch", code);
  }
  git_repository* raw_repo = nullptr;
  if (int code = git_repository_wrap_odb(&raw_repo, odb.get()); code < 0)
    return Git2Error("start an object batch", code);
  return ObjectBatch(std::move(odb), &memory->parent, RepositoryPtr(raw_repo));
}

ObjectBatch::~ObjectBatch() = default;

Status ObjectBatch::Finish() {
  const std::vector<MemoryBackend::Object>& written = MemoryBackend::Of(memory_)->objects;
  if (written.empty()) return {};
  git_packbuilder* raw_builder = nullptr;
  if (int code = git_packbuilder_new(&raw_builder, repo_.get()); code < 0)
    return Git2Error("pack the new objects", code);
  PackBuilderPtr builder(raw_builder);
  git_packbuilder_set_threads(builder.get(), 1);
  for (const MemoryBackend::Object& object : written) {
    if (int code = git_packbuilder_insert(builder.get(), &object.id, nullptr); code < 0)
      return Git2Error("pack the new objects", code);
  }
  git_buf pack = GIT_BUF_INIT;
  if (int code = git_packbuilder_write_buf(&pack, builder.get()); code < 0)
    return Git2Error("pack the new objects", code);
  struct BufFree {
    git_buf* buf;
    ~BufFree() { git_buf_dispose(buf); }
  } free_pack{&pack};

  // The first backend that takes a pack is the on-disk one (memory takes none); with
  // fsync on, its indexer flushes the pack, its index and the directory.
  git_odb_writepack* writer = nullptr;
  if (int code = git_odb_write_pack(&writer, odb_.get(), nullptr, nullptr); code < 0)
    return Git2Error("write the new objects as a pack", code);
  git_indexer_progress progress = {};
  int code = writer->append(writer, pack.ptr, pack.size, &progress);
  if (code >= 0) code = writer->commit(writer, &progress);
  writer->free(writer);
  if (code < 0) return Git2Error("write the new objects as a pack", code);
  return {};
}

}  // namespace berth::git
