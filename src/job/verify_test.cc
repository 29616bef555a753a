#include "job/verify.h"

#include <gtest/gtest.h>

namespace berth::job {
namespace {

TEST(IsCredentialShaped, NamesFromTheBrief) {
  for (const char* name : {"GITHUB_TOKEN", "NPM_TOKENS", "API_KEY", "SSH_KEYS", "DB_SECRET",
                           "CLIENT_SECRETS", "PGPASSWORD", "MYSQL_PASSWD", "GIT_CREDENTIAL",
                           "X_CREDENTIALS", "SESSION", "MY_COOKIE", "GH_PAT", "BASIC_AUTH",
                           "AWS_REGION", "AZURE_TENANT", "GCP_PROJECT", "GOOGLE_CLOUD",
                           "GH_HOST", "GITLAB_URL", "NPM_CONFIG_X", "ANTHROPIC_BASE_URL",
                           "OPENAI_ORG", "XAI_X", "github_token"}) {
    EXPECT_TRUE(IsCredentialShaped(name, "x")) << name;
  }
  for (const char* name : {"PATH", "HOME", "LANG", "TERM", "CC", "CFLAGS", "GOPATH", "TZ"})
    EXPECT_FALSE(IsCredentialShaped(name, "/usr/bin")) << name;
}

TEST(IsCredentialShaped, UrlsWithPasswords) {
  EXPECT_TRUE(IsCredentialShaped("DATABASE_URL", "postgres://app:hunter2@db/app"));
  EXPECT_TRUE(IsCredentialShaped("MIRROR", "https://u:p@example.invalid/x"));
  EXPECT_FALSE(IsCredentialShaped("MIRROR", "https://example.invalid/a:b@c"));
  EXPECT_FALSE(IsCredentialShaped("MIRROR", "https://user@example.invalid/"));
}

}  // namespace
}  // namespace berth::job
