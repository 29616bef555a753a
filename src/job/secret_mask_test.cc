#include "job/secret_mask.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::job {
namespace {

SecretMask MaskOf(const std::vector<std::string>& values) {
  SecretMask mask;
  for (const std::string& v : values) mask.Add(v);
  return mask;
}

// Feeds `text` to a StreamMasker in pieces of `piece` bytes and returns the whole output.
std::string Stream(const SecretMask& mask, const std::string& text, size_t piece) {
  StreamMasker stream(mask);
  std::string out;
  for (size_t at = 0; at < text.size(); at += piece) out += stream.Feed(text.substr(at, piece));
  return out + stream.Finish();
}

TEST(SecretNameTest, CredentialShapedNamesAreSecret) {
  for (const char* name :
       {"GITHUB_TOKEN",          "GH_TOKEN",          "OPENAI_API_KEY",    "ANTHROPIC_AUTH_TOKEN",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "DB_PASSWORD",       "PGPASSWORD",
        "MYSQL_PWD_PASSWD",      "CLIENT_SECRET",     "STRIPE_SECRET_KEY", "SSH_KEY",
        "DEPLOY_KEYS",           "NPM_APIKEY",        "GITLAB_PAT",        "HTTP_AUTH",
        "SESSION_COOKIE",        "GPG_PASSPHRASE",    "azure_credentials", "slack-token",
        "AWS_ACCESS_KEY_ID"})
    EXPECT_TRUE(IsSecretName(name)) << name;
}

TEST(SecretNameTest, OrdinaryNamesAndLocationsAreNot) {
  for (const char* name :
       {"PATH", "HOME", "AWS_REGION", "GOOGLE_CLOUD_PROJECT", "KEYBOARD", "MONKEY",
        "GITHUB_TOKEN_FILE", "AWS_SHARED_CREDENTIALS_FILE", "SSH_KEY_PATH", "GNUPG_SECRET_DIR",
        "SSH_AUTH_SOCK", "XAUTHORITY", "PASSWORD_STORE_DIR", "DBUS_SESSION_BUS_ADDRESS", ""})
    EXPECT_FALSE(IsSecretName(name)) << name;
}

TEST(SecretMaskTest, MasksEveryOccurrence) {
  SecretMask mask = MaskOf({"sk-live-1234567890"});
  EXPECT_EQ(mask.Apply("key=sk-live-1234567890, again sk-live-1234567890."), "key=***, again ***.");
  EXPECT_EQ(mask.Apply("nothing here"), "nothing here");
}

TEST(SecretMaskTest, SkipsShortAndCommonValues) {
  SecretMask mask = MaskOf({"short", "1234567", "password", "PASSWORD", "aaaaaaaaaaaa", "true"});
  EXPECT_TRUE(mask.empty());
  EXPECT_EQ(mask.Apply("password short aaaaaaaaaaaa"), "password short aaaaaaaaaaaa");
}

TEST(SecretMaskTest, LongestValueWinsWhereSeveralMatch) {
  SecretMask mask = MaskOf({"abcdefgh", "abcdefghijkl"});
  EXPECT_EQ(mask.Apply("[abcdefghijkl] [abcdefgh]"), "[***] [***]");
}

TEST(SecretMaskTest, MultiLineValuesMaskEachLineButNotPemArmour) {
  const std::string pem =
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACDxyzxyz\n"
      "-----END OPENSSH PRIVATE KEY-----";
  SecretMask mask = MaskOf({pem});
  EXPECT_EQ(mask.Apply("line b3BlbnNzaC1rZXktdjEAAAAA only"), "line *** only");
  EXPECT_EQ(mask.Apply(pem), "***");
  EXPECT_EQ(mask.Apply("-----BEGIN OPENSSH PRIVATE KEY-----"),
            "-----BEGIN OPENSSH PRIVATE KEY-----");
  // The same key printed inside a JSON string.
  EXPECT_EQ(mask.Apply(nlohmann::json(pem).dump()), "\"***\"");
}

TEST(SecretMaskTest, FromEnvironmentTakesCredentialVariablesAndUrlPasswords) {
  SecretMask mask =
      SecretMask::FromEnvironment({{"PATH", "/usr/local/bin:/usr/bin"},
                                   {"GITHUB_TOKEN", "ghp_abcdefghijklmnop"},
                                   {"FAKE_CLI_CREDENTIAL_X", "named-by-provider-1"},
                                   {"ODD_PROVIDER_VAR", "provider-cred-value"},
                                   {"DATABASE_URL", "postgres://app:hunter2hunter2@db:5432/app"},
                                   {"HOME", "/home/someone"}},
                                  {"ODD_PROVIDER_VAR"});
  EXPECT_EQ(mask.Apply("ghp_abcdefghijklmnop provider-cred-value named-by-provider-1 "
                       "hunter2hunter2 /usr/local/bin /home/someone"),
            "*** *** *** *** /usr/local/bin /home/someone");
}

TEST(SecretMaskTest, JsonStringsAndKeysAreMasked) {
  SecretMask mask = MaskOf({"tok-0123456789"});
  nlohmann::json j = {{"a", "x tok-0123456789 y"},
                      {"list", {"tok-0123456789", 3, nullptr}},
                      {"tok-0123456789", {{"nested", "tok-0123456789"}}}};
  mask.ApplyJson(&j);
  EXPECT_EQ(j.dump(), R"({"***":{"nested":"***"},"a":"x *** y","list":["***",3,null]})");
}

// The bug this guards against: a secret split across two reads of a pipe came out in two
// halves that each looked harmless.
TEST(StreamMaskerTest, SecretSplitAcrossChunksIsMaskedRegression) {
  SecretMask mask = MaskOf({"sk-live-1234567890", "sk-live-12345678901234"});
  const std::string text = "begin sk-live-1234567890 mid sk-live-12345678901234 sk-live-1234 end";
  const std::string expected = "begin *** mid *** sk-live-1234 end";
  ASSERT_EQ(mask.Apply(text), expected);
  for (size_t piece = 1; piece <= text.size(); ++piece)
    EXPECT_EQ(Stream(mask, text, piece), expected) << "pieces of " << piece;
}

TEST(StreamMaskerTest, HoldsBackOnlyWhatCouldBeginASecret) {
  SecretMask mask = MaskOf({"sk-live-1234567890"});
  StreamMasker stream(mask);
  EXPECT_EQ(stream.Feed("hello sk-li"), "hello ");
  EXPECT_EQ(stream.Feed("ve-1234567890 bye"), "*** bye");
  EXPECT_EQ(stream.Feed(" sk-"), " ");
  EXPECT_EQ(stream.Finish(), "sk-");
}

TEST(StreamMaskerTest, WithoutSecretsPassesThrough) {
  SecretMask mask;
  StreamMasker stream(mask);
  EXPECT_EQ(stream.Feed("abc"), "abc");
  EXPECT_EQ(stream.Finish(), "");
}

}  // namespace
}  // namespace berth::job
