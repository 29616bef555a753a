#include "sys/shared_library.h"

#include <dlfcn.h>

#include <utility>

namespace berth::sys {

namespace {

std::string LoaderError() {
  const char* message = ::dlerror();
  return message != nullptr ? message : "unknown error";
}

}  // namespace

Result<SharedLibrary> SharedLibrary::Open(const std::string& name) {
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Error(Cause::kNotFound, "cannot load " + name + ": " + LoaderError());
  }
  return SharedLibrary(handle, name);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), name_(std::move(other.name_)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

Result<void*> SharedLibrary::Symbol(const char* symbol) const {
  ::dlerror();  // clears an earlier error, so that a null symbol can be told from a failure
  void* address = ::dlsym(handle_, symbol);
  if (address == nullptr) {
    return Error(Cause::kNotFound, name_ + " has no symbol " + symbol + ": " + LoaderError());
  }
  return address;
}

}  // namespace berth::sys
