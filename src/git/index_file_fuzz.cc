// libFuzzer entry point for the index reader (ReadIndexFile), which reads the user's own
// .git/index for the quick clean-tree check and berth's snapshot indexes for SpliceIndex.
// Any input must be read or refused, never crash, hang or read outside it; what is read
// must hold together: every entry inside the entries' part, in path order, with a 20-byte id.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "git/index_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth::git;
  // A copy, so that AddressSanitizer sees a read past its end.
  const std::string input(reinterpret_cast<const char*>(data), size);
  IndexFile index;
  if (!ReadIndexFile(input, index).has_value()) return 0;
  CHECK(index.entries_end <= input.size() - kIndexChecksumSize);
  for (size_t i = 0; i < index.entries.size(); ++i) {
    const IndexEntry& entry = index.entries[i];
    CHECK(entry.offset >= kIndexHeaderSize);
    CHECK(entry.offset + entry.size <= index.entries_end);
    CHECK(entry.id.size() == 20);
    if (i > 0) CHECK(!(entry.path < index.entries[i - 1].path));
  }
  return 0;
}
