// Initialises libgit2 once, before the first test, in a test binary whose code reaches libgit2
// but that does not register HermeticGitEnvironment (which initialises it itself). berth's
// library code leaves libgit2's initialisation to the start of each program (git/repository.h),
// and GoogleTest's main is not berth's. Built as an object library, so that the registration
// below is linked into every binary that names it, though nothing refers to it.
#include <gtest/gtest.h>

#include "git/repository.h"

namespace berth::git::testing {
namespace {

class Libgit2Environment : public ::testing::Environment {
 public:
  void SetUp() override { InitLibgit2(); }
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new Libgit2Environment);

}  // namespace
}  // namespace berth::git::testing
