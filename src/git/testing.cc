#include "git/testing.h"

#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "git/handles.h"
#include "git/repository.h"
#include "sys/fs.h"
#include "sys/kernel.h"
#include "sys/spawn.h"

namespace berth::git::testing {

namespace {

std::string& HomeStorage() {
  static std::string home;
  return home;
}

void MakeParents(const std::string& root, const std::string& path) {
  std::string full = root + "/" + path;
  ASSERT_TRUE(sys::MakeDirs(sys::Dirname(full), 0755).has_value()) << full;
}

void Check2(int code, const char* what) {
  if (code < 0) {
    const git_error* error = git_error_last();
    ADD_FAILURE() << what << ": " << (error != nullptr ? error->message : "?");
  }
}

}  // namespace

std::string TempRoot() {
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && tmp[0] == '/') return tmp;
  return "/var/tmp";
}

TempDir::TempDir(const std::string& prefix) {
  Result<std::string> made = sys::MakeTempDir(TempRoot(), prefix);
  if (!made) {
    ADD_FAILURE() << made.error().ToString();
    return;
  }
  path_ = *made;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  // Overlay work dirs (mode 000) and read-only dirs made by tests must not stop the removal.
  std::vector<std::string> pending = {path_};
  while (!pending.empty()) {
    std::string dir = pending.back();
    pending.pop_back();
    ::chmod(dir.c_str(), 0700);
    Result<std::vector<std::string>> names = sys::ListDir(dir);
    if (!names) continue;
    for (const std::string& name : *names) {
      if (sys::TypeOf(dir + "/" + name) == sys::FileType::kDirectory)
        pending.push_back(dir + "/" + name);
    }
  }
  IgnoreError(sys::RemoveTree(path_), "a test's temporary directory left behind harms nothing");
}

void HermeticGitEnvironment::SetUp() {
  Result<std::string> home = sys::MakeTempDir(TempRoot(), "berth-git-home-");
  ASSERT_TRUE(home.has_value());
  HomeStorage() = *home;
  ::chmod(home->c_str(), 0755);
  ::setenv("HOME", home->c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (*home + "/.config").c_str(), 1);
  ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  InitLibgit2();
  for (int level : {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_XDG,
                    GIT_CONFIG_LEVEL_PROGRAMDATA}) {
    ASSERT_EQ(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, home->c_str()), 0);
  }
  WriteFile(*home, ".gitconfig", "[user]\n\tname = Test\n\temail = test@example.com\n");
}

void HermeticGitEnvironment::TearDown() {
  IgnoreError(sys::RemoveTree(HomeStorage()), "a test's temporary home left behind harms nothing");
}

const std::string& HermeticGitEnvironment::home() { return HomeStorage(); }

void WriteFile(const std::string& root, const std::string& path, const std::string& content,
               mode_t mode) {
  MakeParents(root, path);
  std::string full = root + "/" + path;
  ::unlink(full.c_str());
  int fd = ::open(full.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << full << ": " << std::strerror(errno);
  ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  ::fchmod(fd, mode);
  ::close(fd);
}

void MakeSymlink(const std::string& root, const std::string& path, const std::string& target) {
  MakeParents(root, path);
  std::string full = root + "/" + path;
  ::unlink(full.c_str());
  ASSERT_EQ(::symlink(target.c_str(), full.c_str()), 0) << full;
}

std::string ReadFileOrDie(const std::string& path) {
  Result<std::string> data = sys::ReadFile(path);
  EXPECT_TRUE(data.has_value()) << path;
  return data.value_or("");
}

void InitRepo(const std::string& dir) {
  git_repository* repo = nullptr;
  Check2(git_repository_init(&repo, dir.c_str(), 0), "git init");
  git_repository_free(repo);
}

std::string CommitAll(const std::string& dir, const std::string& message) {
  git_repository* raw = nullptr;
  Check2(git_repository_open(&raw, dir.c_str()), "open");
  RepositoryPtr repo(raw);
  git_index* raw_index = nullptr;
  Check2(git_repository_index(&raw_index, repo.get()), "index");
  IndexPtr index(raw_index);
  Check2(git_index_add_all(index.get(), nullptr, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr),
         "add_all");
  Check2(git_index_update_all(index.get(), nullptr, nullptr, nullptr), "update_all");
  Check2(git_index_write(index.get()), "write index");
  git_oid tree_id;
  Check2(git_index_write_tree(&tree_id, index.get()), "write tree");
  git_tree* raw_tree = nullptr;
  Check2(git_tree_lookup(&raw_tree, repo.get(), &tree_id), "tree");
  TreePtr tree(raw_tree);
  git_signature* raw_signature = nullptr;
  Check2(git_signature_now(&raw_signature, "Test", "test@example.com"), "signature");
  SignaturePtr signature(raw_signature);
  git_oid parent_id;
  CommitPtr parent;
  if (git_reference_name_to_id(&parent_id, repo.get(), "HEAD") == 0) {
    git_commit* raw_parent = nullptr;
    Check2(git_commit_lookup(&raw_parent, repo.get(), &parent_id), "parent");
    parent.reset(raw_parent);
  }
  const git_commit* parents[] = {parent.get()};
  git_oid commit_id;
  Check2(git_commit_create(&commit_id, repo.get(), "HEAD", signature.get(), signature.get(),
                           nullptr, (message + "\n").c_str(), tree.get(), parent ? 1 : 0, parents),
         "commit");
  return OidHex(commit_id);
}

std::string CommitGeneratedTree(const std::string& dir, int count, int per_dir) {
  git_repository* raw = nullptr;
  Check2(git_repository_open(&raw, dir.c_str()), "open");
  RepositoryPtr repo(raw);
  git_treebuilder* raw_root = nullptr;
  Check2(git_treebuilder_new(&raw_root, repo.get(), nullptr), "root builder");
  TreeBuilderPtr root(raw_root);
  for (int first = 0; first < count; first += per_dir) {
    git_treebuilder* raw_dir = nullptr;
    Check2(git_treebuilder_new(&raw_dir, repo.get(), nullptr), "dir builder");
    TreeBuilderPtr dir_builder(raw_dir);
    for (int i = first; i < count && i < first + per_dir; ++i) {
      std::string content = "generated file " + std::to_string(i) + "\n";
      git_oid blob;
      Check2(git_blob_create_from_buffer(&blob, repo.get(), content.data(), content.size()),
             "blob");
      char name[32];
      std::snprintf(name, sizeof name, "file%06d.txt", i);
      Check2(git_treebuilder_insert(nullptr, dir_builder.get(), name, &blob, GIT_FILEMODE_BLOB),
             "insert");
    }
    git_oid dir_id;
    Check2(git_treebuilder_write(&dir_id, dir_builder.get()), "write dir");
    char name[32];
    std::snprintf(name, sizeof name, "dir%05d", first / per_dir);
    Check2(git_treebuilder_insert(nullptr, root.get(), name, &dir_id, GIT_FILEMODE_TREE),
           "insert dir");
  }
  git_oid tree_id;
  Check2(git_treebuilder_write(&tree_id, root.get()), "write root");
  git_tree* raw_tree = nullptr;
  Check2(git_tree_lookup(&raw_tree, repo.get(), &tree_id), "tree");
  TreePtr tree(raw_tree);
  git_signature* raw_signature = nullptr;
  Check2(git_signature_now(&raw_signature, "Test", "test@example.com"), "signature");
  SignaturePtr signature(raw_signature);
  git_oid commit_id;
  Check2(git_commit_create(&commit_id, repo.get(), "HEAD", signature.get(), signature.get(),
                           nullptr, "generated\n", tree.get(), 0, nullptr),
         "commit");
  return OidHex(commit_id);
}

RunResult RunGit(const std::vector<std::string>& args, const std::string& cwd,
                 const std::map<std::string, std::string>& extra_env, const std::string& input) {
  RunResult result;
  if (args.empty()) return result;
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", HomeStorage()},
      {"XDG_CONFIG_HOME", HomeStorage() + "/.config"},
      {"GIT_CONFIG_NOSYSTEM", "1"},
      {"LC_ALL", "C"},
  };
  for (const auto& [key, value] : extra_env) env[key] = value;
  sys::SpawnOptions options;
  options.argv = {"/usr/bin/git"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  for (const auto& [key, value] : env) options.env.push_back(key + "=" + value);
  options.cwd = cwd;
  Result<sys::Pipe> out = sys::MakePipe();
  Result<sys::Pipe> in = sys::MakePipe();
  if (!out || !in) {
    result.output = "pipe failed";
    return result;
  }
  options.stdio[0] = in->read.get();
  options.stdio[1] = out->write.get();
  options.stdio[2] = out->write.get();
  Result<sys::Process> git = sys::Spawn(options);
  if (!git) {
    result.output = git.error().ToString();
    return result;
  }
  out->write.Reset();
  in->read.Reset();
  // Small inputs only: written before reading the output. A git that does not read its
  // input closes the pipe early; its exit code then tells what happened.
  if (sys::kernel::WriteAll(in->write.get(), input.data(), input.size()) != 0)
    result.output = "(git did not read all of its input)\n";
  in->write.Reset();
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(out->read.get(), buffer, sizeof buffer)) > 0)
    result.output.append(buffer, static_cast<size_t>(n));
  Result<sys::ExitStatus> status = git->Wait();
  result.exit_code = status ? status->ShellCode() : -1;
  return result;
}

}  // namespace berth::git::testing
