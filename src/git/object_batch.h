// Objects written as one pack: the objects of one commit (its blobs, trees and the commit)
// are kept in memory while it is built and then written to the repository as one pack file
// and its index, flushed once each, instead of one loose file per object with a flush of the
// file and of its directory each (docs/workspace.md, "How a job's commit is written").
// Only files that link libgit2 include this.
#pragma once

#include <git2.h>

#include "base/result.h"
#include "git/handles.h"

namespace berth::git {

class ObjectBatch {
 public:
  // A repository over the objects of `repo` (its common directory's objects, with their
  // alternates) whose writes go to memory. Nothing is written to disk before Finish.
  static Result<ObjectBatch> Open(git_repository* repo);

  ObjectBatch(ObjectBatch&&) noexcept = default;
  ObjectBatch& operator=(ObjectBatch&&) noexcept = default;
  ~ObjectBatch();

  // Read and write objects here while the batch is open.
  git_repository* repo() const { return repo_.get(); }
  // Writes what was written to repo() as one pack into the objects directory (nothing when
  // nothing was written); afterwards every object is readable through any repository of
  // those objects. Without it the objects are dropped.
  Status Finish();

 private:
  ObjectBatch(OdbPtr odb, git_odb_backend* memory, RepositoryPtr repo)
      : odb_(std::move(odb)), memory_(memory), repo_(std::move(repo)) {}

  OdbPtr odb_;
  git_odb_backend* memory_ = nullptr;  // owned by odb_
  RepositoryPtr repo_;
};

}  // namespace berth::git
