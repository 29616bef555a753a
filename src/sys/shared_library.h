// SharedLibrary: a shared library loaded at run time (dlopen), for a dependency that only some
// commands need. Linking such a library would cost every berth start its mapping and
// relocations (and those of everything it depends on); loading it on first use costs only the
// commands that use it.
#pragma once

#include <string>

#include "base/result.h"

namespace berth::sys {

// Owns one dlopen handle; move-only. Symbols found through it stay valid while it lives. Safe
// to use from several threads (dlopen and dlsym are).
class SharedLibrary {
 public:
  // Loads `name` (a soname such as "libpq.so.5", looked up the way the dynamic linker does)
  // with RTLD_NOW | RTLD_LOCAL, so that a missing dependency fails here and its symbols do
  // not mix with berth's own. kNotFound, with the loader's reason, when it cannot be loaded.
  static Result<SharedLibrary> Open(const std::string& name);

  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  // The address of `symbol`; kNotFound when the library does not define it (too old a version).
  Result<void*> Symbol(const char* symbol) const;
  const std::string& name() const { return name_; }

 private:
  SharedLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}

  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace berth::sys
