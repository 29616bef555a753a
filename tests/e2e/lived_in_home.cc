#include "tests/e2e/lived_in_home.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

#include "sys/fs.h"
#include "tests/e2e/e2e_util.h"

namespace berth::e2e {

namespace {

// Where the marker goes in each credential file's content. Markers are ten characters so that
// ~/.ssh/id_rsa, ~/.aws/credentials and ~/.netrc keep the 11 bytes ("SECRET-KEY\n") that the
// sandbox suite expects of the nearly-empty home.
struct CredentialTemplate {
  const char* path;
  const char* before;
  const char* after;
  const char* state_dir;
};

constexpr CredentialTemplate kCredentials[] = {
    {".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n",
     "\n-----END OPENSSH PRIVATE KEY-----\n", ""},
    {".ssh/id_rsa", "", "\n", ""},
    {".aws/credentials", "", "\n", ""},
    {".aws/config", "[profile ci]\ncredential_process = echo ", "\n", ""},
    {".gnupg/private-keys-v1.d/k.key", "(private-key (ecc (d #", "#)))\n", ""},
    {".netrc", "", "\n", ""},
    {".docker/config.json", "{\"auths\":{\"registry.example\":{\"auth\":\"", "\"}}}\n", ""},
    {".kube/config", "apiVersion: v1\nusers:\n- name: dev\n  user:\n    token: ", "\n", ""},
    {".config/gcloud/application_default_credentials.json",
     "{\"type\":\"authorized_user\",\"refresh_token\":\"", "\"}\n", ""},
    {".azure/msal_token_cache.json", "{\"AccessToken\":{\"k\":{\"secret\":\"", "\"}}}\n", ""},
    {".git-credentials", "https://dev:", "@git.example\n", ""},
    {".config/gh/hosts.yml", "github.com:\n    oauth_token: ", "\n", ""},
    {".npmrc", "//registry.npmjs.org/:_authToken=", "\n", ""},
    {".pypirc", "[pypi]\nusername = __token__\npassword = ", "\n", ""},
    {".cargo/credentials.toml", "[registry]\ntoken = \"", "\"\n", ""},
    {".config/hub", "github.com:\n- user: dev\n  oauth_token: ", "\n", ""},
    {".terraform.d/credentials.tfrc.json", "{\"credentials\":{\"app.terraform.io\":{\"token\":\"",
     "\"}}}\n", ""},
    {".password-store/x.gpg", "", "\n", ""},
    {".local/share/keyrings/login.keyring", "GnomeKeyring\n", "\n", ""},
    {".vault-token", "", "\n", ""},
    {".codex/auth.json", "{\"OPENAI_API_KEY\":\"", "\"}\n", "~/.codex"},
    {".claude/.credentials.json", "{\"claudeAiOauth\":{\"accessToken\":\"", "\"}}\n", "~/.claude"},
    {".pgpass", "localhost:5432:*:postgres:", "\n", ""},
    {".my.cnf", "[client]\nuser = dev\npassword = ", "\n", ""},
    {".s3cfg", "[default]\naccess_key = AKIAEXAMPLE\nsecret_key = ", "\n", ""},
    {".boto", "[Credentials]\naws_secret_access_key = ", "\n", ""},
    {".m2/settings.xml", "<settings><servers><server><id>r</id><password>",
     "</password></server></servers></settings>\n", ""},
    {".gradle/gradle.properties", "org.gradle.daemon=true\nsigning.password=", "\n", ""},
    {".gem/credentials", "---\n:rubygems_api_key: ", "\n", ""},
    {".config/rclone/rclone.conf", "[remote]\ntype = s3\nsecret_access_key = ", "\n", ""},
    {".bash_history", "ls\nexport GITHUB_TOKEN=", "\ngit push\n", ""},
};

// Files that are not secrets but that every developer's home has. Paths relative to HOME.
struct PlainFile {
  const char* path;
  const char* content;
  mode_t mode;
};

constexpr PlainFile kPlainFiles[] = {
    {".claude.json",
     "{\"numStartups\":42,\"userID\":\"0123abcd\",\"hasCompletedOnboarding\":true,"
     "\"projects\":{}}\n",
     0600},
    {".claude/settings.json", "{\"permissions\":{\"allow\":[\"Bash(ls:*)\"]}}\n", 0644},
    {".claude/projects/-home-dev-src/session.jsonl", "{\"type\":\"user\"}\n", 0600},
    {".codex/config.toml", "model = \"gpt-5\"\n[history]\npersistence = \"save-all\"\n", 0644},
    {".codex/sessions/2026/rollout.jsonl", "{}\n", 0600},
    {"dotfiles/.git/HEAD", "ref: refs/heads/main\n", 0644},
    {"dotfiles/bashrc", "export PATH=\"$HOME/.local/bin:$PATH\"\n. \"$HOME/.nvm/nvm.sh\"\n", 0644},
    {"dotfiles/gitconfig",
     "[user]\n\tname = Dev Eloper\n\temail = dev@example.invalid\n"
     "[include]\n\tpath = ~/.gitconfig.local\n"
     "[credential]\n\thelper = store\n"
     "[init]\n\tdefaultBranch = main\n",
     0644},
    {".gitconfig.local", "[core]\n\teditor = vi\n[pull]\n\trebase = true\n", 0644},
    {".profile", "[ -f ~/.bashrc ] && . ~/.bashrc\n", 0644},
    {".cache/pip/http/0/1/entry", "cached wheel\n", 0644},
    {".cache/npm/_cacache/index-v5/00/entry", "cached tarball\n", 0644},
    {".cache/go-build/00/0000-a", "cached object\n", 0644},
    {".npm/_logs/2026-debug.log", "0 verbose cli\n", 0644},
    {".local/bin/devtool", "#!/bin/sh\necho devtool 1.0\n", 0755},
    {".nvm/nvm.sh", "# nvm\nnvm_version() { echo v20.11.0; }\n", 0644},
    {".nvm/alias/default", "20\n", 0644},
    {".nvm/versions/node/v20.11.0/bin/node", "#!/bin/sh\necho v20.11.0\n", 0755},
    {".config/git/ignore", ".DS_Store\n", 0644},
    {".agents/skills/review/SKILL.md", "# review\n", 0644},
};

// Dotfiles that are symlinks into ~/dotfiles, as dotfile managers leave them: one relative,
// one absolute (filled in with HOME).
struct DotfileLink {
  const char* link;
  const char* target;
  bool absolute;
};

constexpr DotfileLink kLinks[] = {
    {".bashrc", "dotfiles/bashrc", false},
    {".gitconfig", "dotfiles/gitconfig", true},
};

constexpr char kSocketPath[] = ".local/state/devtool/agent.sock";

Status WriteFileIn(const std::string& home, const std::string& relative, const std::string& content,
                   mode_t mode) {
  const std::string path = home + "/" + relative;
  TRY(sys::MakeDirs(path.substr(0, path.rfind('/')), 0755));
  return WriteText(path, content, mode);
}

}  // namespace

const std::vector<CredentialFile>& LivedInCredentials() {
  static const std::vector<CredentialFile> kFiles = [] {
    std::vector<CredentialFile> files;
    int index = 0;
    for (const CredentialTemplate& t : kCredentials) {
      std::string number = std::to_string(++index);
      files.push_back(
          {t.path, "SECRET-" + std::string(3 - number.size(), '0') + number, t.state_dir});
    }
    return files;
  }();
  return kFiles;
}

std::vector<std::string> LivedInHome::CredentialPaths() const {
  std::vector<std::string> paths;
  for (const CredentialFile& file : LivedInCredentials()) paths.push_back(home_ + "/" + file.path);
  return paths;
}

Result<std::unique_ptr<LivedInHome>> LivedInHome::Create(const std::string& home) {
  std::unique_ptr<LivedInHome> lived_in(new LivedInHome(home));
  const std::vector<CredentialFile>& files = LivedInCredentials();
  for (size_t i = 0; i < files.size(); ++i) {
    TRY(WriteFileIn(home, files[i].path,
                    kCredentials[i].before + files[i].marker + kCredentials[i].after, 0600));
  }
  for (const PlainFile& file : kPlainFiles)
    TRY(WriteFileIn(home, file.path, file.content, file.mode));
  // Directories of credentials are private, as ssh and gpg insist.
  for (const char* dir : {".ssh", ".gnupg", ".gnupg/private-keys-v1.d", ".password-store"}) {
    if (chmod((home + "/" + dir).c_str(), 0700) != 0)
      return Error::FromErrno(std::string("chmod ") + dir, errno);
  }
  for (const DotfileLink& link : kLinks) {
    const std::string path = home + "/" + link.link;
    const std::string target = link.absolute ? home + "/" + link.target : link.target;
    TRY(sys::RemoveTree(path));
    if (symlink(target.c_str(), path.c_str()) != 0)
      return Error::FromErrno("symlink " + path, errno);
  }
  const std::string socket = home + "/" + kSocketPath;
  TRY(sys::MakeDirs(socket.substr(0, socket.rfind('/')), 0700));
  lived_in->socket_ = TRY(UnixHttpServer::Start(socket, "hello-from-the-home-socket"));
  return lived_in;
}

}  // namespace berth::e2e
