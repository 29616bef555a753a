#include "workspace/submodules.h"

#include <cctype>
#include <sstream>

#include "sys/fs.h"

namespace berth::workspace {

namespace {

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// git's own rule (submodule.c, check_submodule_name): no empty name, no `..` component.
bool SafeName(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\n') != std::string::npos) return false;
  std::stringstream parts(name);
  for (std::string part; std::getline(parts, part, '/');)
    if (part == ".." || part == "." || part.empty()) return false;
  return true;
}

bool IsHexId(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::optional<std::string> ResolveRef(const std::string& git_dir, const std::string& ref) {
  if (ref.rfind("refs/", 0) != 0 || ref.find("..") != std::string::npos) return std::nullopt;
  if (Result<std::string> loose = sys::ReadFile(git_dir + "/" + ref); loose) {
    std::string id = Trim(*loose);
    if (IsHexId(id)) return id;
  }
  Result<std::string> packed = sys::ReadFile(git_dir + "/packed-refs");
  if (!packed) return std::nullopt;
  std::stringstream lines(*packed);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 41 && line[40] == ' ' && Trim(line.substr(41)) == ref &&
        IsHexId(line.substr(0, 40)))
      return line.substr(0, 40);
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<Submodule>> ListOwnSubmodules(git::Repository& repo, const std::string& commit) {
  std::vector<Submodule> out;
  std::optional<git::TreeEntry> file = TRY(repo.FindEntry(commit, ".gitmodules"));
  if (!file || file->mode == 040000 || file->mode == 0160000) return out;
  std::string text = TRY(repo.ReadBlob(file->oid));
  // A minimal reading of git's config syntax: [submodule "NAME"] sections and their `path`.
  std::string name;
  std::stringstream lines(text);
  for (std::string raw; std::getline(lines, raw);) {
    std::string line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      name.clear();
      size_t quote = line.find('"');
      size_t close = line.rfind('"');
      if (Lower(Trim(line.substr(1, quote == std::string::npos ? 0 : quote - 1))) == "submodule" &&
          quote != std::string::npos && close > quote)
        name = line.substr(quote + 1, close - quote - 1);
      continue;
    }
    size_t eq = line.find('=');
    if (name.empty() || eq == std::string::npos || Lower(Trim(line.substr(0, eq))) != "path")
      continue;
    std::string path = Unquote(Trim(line.substr(eq + 1)));
    while (!path.empty() && path.back() == '/') path.pop_back();
    if (path.empty() || !SafeName(name)) continue;
    std::optional<git::TreeEntry> link = TRY(repo.FindEntry(commit, path));
    if (!link || link->mode != 0160000) continue;
    bool seen = false;
    for (const Submodule& s : out) seen = seen || s.path == path;
    if (!seen) out.push_back(Submodule{path, name, link->oid, ""});
  }
  return out;
}

namespace {

// Appends `commit`'s submodules, and theirs, below `parent` (null: the top of `top`).
Status ListInto(git::Repository& top, git::Repository& at, const std::string& commit,
                const Submodule* parent, int depth, std::vector<Submodule>& out) {
  for (Submodule sub : TRY(ListOwnSubmodules(at, commit))) {
    if (parent) {
      sub.path = parent->path + "/" + sub.path;
      sub.name = parent->name + "/modules/" + sub.name;
      sub.parent = parent->path;
    }
    out.push_back(sub);
    if (depth + 1 >= kMaxSubmoduleDepth) continue;
    std::string why;
    std::optional<git::Repository> module = OpenModule(top, sub, &why);
    if (module) TRY(ListInto(top, *module, sub.commit, &sub, depth + 1, out));
  }
  return {};
}

}  // namespace

Result<std::vector<Submodule>> ListSubmodules(git::Repository& repo, const std::string& commit) {
  std::vector<Submodule> out;
  TRY(ListInto(repo, repo, commit, nullptr, 0, out));
  return out;
}

std::string ModuleGitDir(const git::Repository& repo, const std::string& name) {
  return repo.gitdir() + "/modules/" + name;
}

std::optional<git::Repository> OpenModule(const git::Repository& repo, const Submodule& sub,
                                          std::string* why) {
  std::string dir = ModuleGitDir(repo, sub.name);
  if (!sys::Exists(dir + "/HEAD")) {
    *why = "not initialised in the repository (no .git/modules/" + sub.name + "; run `git " +
           (sub.parent.empty() ? "submodule update --init " + sub.path
                               : "submodule update --init --recursive " + sub.parent) +
           "`)";
    return std::nullopt;
  }
  Result<git::Repository> module = git::Repository::OpenGitDir(dir);
  if (!module) {
    *why = "its git directory .git/modules/" + sub.name + " cannot be read (" +
           module.error().ToString() + ")";
    return std::nullopt;
  }
  if (!module->HasCommit(sub.commit)) {
    *why = "the recorded commit " + sub.commit + " is not in .git/modules/" + sub.name +
           " (run `git submodule update " +
           (sub.parent.empty() ? sub.path : "--recursive " + sub.parent) + "`)";
    return std::nullopt;
  }
  return std::move(*module);
}

std::string GitFileTarget(const Submodule& sub) {
  std::string up;
  for (char c : sub.path)
    if (c == '/') up += "../";
  return up + "../.git/modules/" + sub.name;
}

std::optional<std::string> ModuleHead(const std::string& git_dir, const std::string& name) {
  std::string dir = git_dir + "/modules/" + name;
  Result<std::string> head = sys::ReadFile(dir + "/HEAD");
  if (!head) return std::nullopt;
  std::string text = Trim(*head);
  if (IsHexId(text)) return text;
  if (text.rfind("ref:", 0) == 0) return ResolveRef(dir, Trim(text.substr(4)));
  return std::nullopt;
}

}  // namespace berth::workspace
