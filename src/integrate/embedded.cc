#include "integrate/embedded.h"

#include <cstring>

namespace berth::integrate {

const char* FindEmbedded(const EmbeddedFile* files, size_t count, const char* path) {
  for (size_t i = 0; i < count; ++i)
    if (std::strcmp(files[i].path, path) == 0) return files[i].content;
  return nullptr;
}

}  // namespace berth::integrate
