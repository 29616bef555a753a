#include "workspace/paths.h"

#include <gtest/gtest.h>

#include "workspace/secrets.h"

namespace berth::workspace {
namespace {

TEST(NormalizeRelative, KeepsInsideRejectsEscapes) {
  EXPECT_EQ(NormalizeRelative("a//b/./c"), "a/b/c");
  EXPECT_EQ(NormalizeRelative(".env.example"), ".env.example");
  EXPECT_EQ(NormalizeRelative("dir/"), "dir");
  EXPECT_EQ(NormalizeRelative("/etc/passwd"), std::nullopt);
  EXPECT_EQ(NormalizeRelative("a/../b"), std::nullopt);
  EXPECT_EQ(NormalizeRelative("../x"), std::nullopt);
  EXPECT_EQ(NormalizeRelative(""), std::nullopt);
  EXPECT_EQ(NormalizeRelative("./"), std::nullopt);
}

TEST(CheckSymlink, LexicalResolutionFromTheLinksDirectory) {
  EXPECT_EQ(CheckSymlink("link", "README.md"), SymlinkVerdict::kInside);
  EXPECT_EQ(CheckSymlink("docs/link", "../README.md"), SymlinkVerdict::kInside);
  EXPECT_EQ(CheckSymlink("a/b/link", "../../x"), SymlinkVerdict::kInside);
  EXPECT_EQ(CheckSymlink("a/b/link", "../../../x"), SymlinkVerdict::kLeaves);
  EXPECT_EQ(CheckSymlink("link", "../repo/README.md"), SymlinkVerdict::kLeaves);
  EXPECT_EQ(CheckSymlink("a/link", "b/../../../x"), SymlinkVerdict::kLeaves);
  EXPECT_EQ(CheckSymlink("link", "does/not/exist"), SymlinkVerdict::kInside);
  EXPECT_EQ(CheckSymlink("link", "/etc/passwd"), SymlinkVerdict::kAbsolute);
}

TEST(ProtectedReason, GitAnywhereAndTopLevelBerth) {
  EXPECT_NE(ProtectedReason(".git/config"), "");
  EXPECT_NE(ProtectedReason("vendor/lib/.git/HEAD"), "");
  EXPECT_NE(ProtectedReason(".berth/policy.toml"), "");
  EXPECT_NE(ProtectedReason(".berth"), "");
  EXPECT_EQ(ProtectedReason("docs/.berth/x"), "");
  EXPECT_EQ(ProtectedReason(".gitignore"), "");
  EXPECT_EQ(ProtectedReason("src/.github/x"), "");
}

// A `.GIT` directory (any case) ended the job `failed` with libgit2's tree error: every name
// git treats as `.git` is protected.
TEST(ProtectedReason, NamesGitTreatsAsDotGitRegression) {
  for (const char* name :
       {".git", ".GIT", ".Git", ".gIT", ".git.", ".git ", ".git. .", ".git::$INDEX_ALLOCATION",
        "git~1", "GIT~1", "Git~2.", ".g\xe2\x80\x8cit", "\xef\xbb\xbf.GIT"}) {
    EXPECT_TRUE(IsGitName(name)) << name;
    EXPECT_NE(ProtectedReason(std::string("src/") + name + "/HEAD"), "") << name;
  }
  for (const char* name : {".gitignore", ".github", ".gitx", "git", "git~", "git~a", ".g", "x.git"})
    EXPECT_FALSE(IsGitName(name)) << name;
  EXPECT_NE(ProtectedReason(".GIT/config").find(".GIT"), std::string::npos);
}

TEST(LooksLikeSecret, Names) {
  for (const char* name : {".env", ".env.local", ".ENV.production", "server.pem", "tls.key",
                           "id_rsa", "id_rsa.pub", "id_ed25519", "cert.p12", "store.pfx",
                           "credentials.json", "client_secret.json", "MySecrets.txt", ".netrc"})
    EXPECT_TRUE(LooksLikeSecret(name)) << name;
  for (const char* name : {".env.example", ".env.sample", ".env.template", "README.md", "keys.txt",
                           "environment.yml", "monkey.py"})
    EXPECT_FALSE(LooksLikeSecret(name)) << name;
}

}  // namespace
}  // namespace berth::workspace
