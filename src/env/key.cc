#include "env/key.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "env/postgres.h"
#include "policy/glob.h"
#include "policy/sha256.h"

namespace berth::env {

namespace {

// Bumped whenever the text below changes meaning, so that no old layer is taken for a new key.
// 2: the repository's root joined the key.
constexpr const char* kKeyVersion = "berth-environment-key 2";

// A glob with none of * ? [ names one path: looked up directly, without listing the tree.
bool IsLiteral(const std::string& pattern) {
  return pattern[0] != '!' && pattern.find_first_of("*?[") == std::string::npos;
}

// Each list as one JSON line: unambiguous whatever the strings hold (newlines, quotes).
std::string Line(const char* name, const nlohmann::json& value) {
  return std::string(name) + " " + JsonText(value) + "\n";
}

// The entries of the commit's tree the key globs match, by path.
Result<std::vector<git::TreeEntry>> KeyFiles(git::Repository& repo, const std::string& commit,
                                             const std::vector<std::string>& key) {
  std::vector<git::TreeEntry> files;
  if (key.empty()) return files;
  const bool literal = std::all_of(key.begin(), key.end(), IsLiteral);
  if (literal) {
    for (const std::string& path : key) {
      std::optional<git::TreeEntry> entry = TRY(repo.FindEntry(commit, path));
      if (entry && entry->mode != 040000) files.push_back(*entry);
    }
    std::sort(files.begin(), files.end(),
              [](const git::TreeEntry& a, const git::TreeEntry& b) { return a.path < b.path; });
    files.erase(std::unique(files.begin(), files.end(),
                            [](const git::TreeEntry& a, const git::TreeEntry& b) {
                              return a.path == b.path;
                            }),
                files.end());
  } else {
    policy::GlobSet globs = TRY(policy::GlobSet::Create(key));
    for (git::TreeEntry& entry : TRY(repo.ListTree(commit)))
      if (globs.Matches(entry.path)) files.push_back(std::move(entry));
  }
  return files;
}

}  // namespace

Result<std::string> KeyText(git::Repository& repo, const std::string& commit,
                            const policy::Environment& environment) {
  std::string text = std::string(kKeyVersion) + "\n";
  // What setup writes may hold the root it ran at (a venv's scripts start with
  // #!<root>/.venv/bin/python): a layer is only for the checkout, at the path, it was built in.
  text += Line("root", repo.workdir());
  text += Line("setup", environment.setup);
  text += Line("paths", environment.paths);
  text += Line("hosts", environment.hosts);
  text += Line("grants", environment.grants);
  text += Line("pass", environment.pass);
  for (const git::TreeEntry& file : TRY(KeyFiles(repo, commit, environment.key)))
    text += Line("file", nlohmann::json::array({file.path, file.oid}));
  // Services: absent for an environment without any, so that such keys keep their meaning.
  for (const policy::Service& service : environment.services) {
    // The server's major version decides the data directory's format.
    const Postgres postgres = TRY(FindPostgres());
    text += Line("service", nlohmann::json::array({service.name, service.kind, postgres.major}));
    text += Line("service-setup", service.setup);
    for (const git::TreeEntry& file : TRY(KeyFiles(repo, commit, service.key)))
      text += Line("service-file", nlohmann::json::array({file.path, file.oid}));
  }
  return text;
}

Result<std::string> LayerKey(git::Repository& repo, const std::string& commit,
                             const policy::Environment& environment) {
  return policy::Sha256Hex(TRY(KeyText(repo, commit, environment)));
}

bool IsLayerKey(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace berth::env
