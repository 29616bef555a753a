// The man page and the shell completions are generated from berth's own command table
// (`berth __generate`, docs/cli.md): each must name every command and every option that
// `--help` shows, so that a command or flag added later cannot be missing from them.
//
// Two independent views are compared: `--help` of the root and of every command (what users
// read), and `__generate commands` (the walk the generators share). The first proves the walk
// misses nothing; each generated output is then checked against the walk.

#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "tests/e2e/e2e_util.h"

namespace berth::e2e {
namespace {

class GenerateTest : public ::testing::Test {
 protected:
  RunResult Berth(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {BERTH_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}}, "/");
  }
  std::string Generate(const std::string& what) {
    RunResult r = Berth({"__generate", what});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_FALSE(r.out.empty()) << r.Describe();
    return r.out;
  }
};

// One entry of the walk: the command ("berth policy check") and, for an option, its name.
struct Entry {
  std::string command;
  std::string option;  // "--timeout", "-t" or "" for the command itself
};

std::vector<Entry> Walk(const std::string& text) {
  std::vector<Entry> entries;
  for (const std::string& line : Split(text, '\n')) {
    if (line.empty()) continue;
    size_t dash = line.find(" -");
    if (dash == std::string::npos)
      entries.push_back({line, ""});
    else
      entries.push_back({line.substr(0, dash), line.substr(dash + 1)});
  }
  return entries;
}

// The names `--help` lists under "Subcommands:", and the option words it lists under "Options:".
void ParseHelp(const std::string& help, std::vector<std::string>* subcommands,
               std::set<std::string>* options) {
  std::string section;
  static const std::regex kOption(R"((^|[ ,])(--?[A-Za-z0-9][A-Za-z0-9-]*))");
  for (const std::string& line : Split(help, '\n')) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    // An entry starts at two spaces; its description, wrapped, is indented further.
    if (line.size() < 3 || line[2] == ' ') continue;
    const std::string head = line.substr(2, line.find("  ", 2) - 2);
    if (section == "Subcommands:") subcommands->push_back(head);
    if (section == "Options:") {
      for (std::sregex_iterator it(head.begin(), head.end(), kOption), end; it != end; ++it)
        options->insert((*it)[2]);
    }
  }
}

TEST_F(GenerateTest, TheWalkNamesEveryCommandAndOptionThatHelpShows) {
  const std::vector<Entry> walk = Walk(Generate("commands"));
  std::set<std::string> known;
  for (const Entry& e : walk)
    known.insert(e.option.empty() ? e.command : e.command + " " + e.option);

  std::vector<std::vector<std::string>> pending = {{}};
  size_t commands = 0;
  while (!pending.empty()) {
    std::vector<std::string> path = pending.back();
    pending.pop_back();
    std::vector<std::string> args = path;
    args.push_back("--help");
    RunResult help = Berth(args);
    ASSERT_EQ(help.exit_code, 0) << help.Describe();
    std::string name = "berth";
    for (const std::string& p : path) name += " " + p;
    ++commands;
    EXPECT_TRUE(known.count(name)) << name << " is missing from the walk";
    std::vector<std::string> subs;
    std::set<std::string> options;
    ParseHelp(help.out, &subs, &options);
    for (const std::string& o : options)
      EXPECT_TRUE(known.count(name + " " + o)) << name << " " << o << " is missing from the walk";
    for (const std::string& s : subs) {
      // `berth lane` parses pstack-runner's command line, not CLI11's (docs/lane.md).
      if (path.empty() && s == "lane") continue;
      std::vector<std::string> child = path;
      child.push_back(s);
      pending.push_back(child);
    }
  }
  // The root, its commands and the nested ones (policy check, env ls/build/rm).
  EXPECT_GT(commands, 20u);
}

// `roff` escapes every dash.
std::string RoffDashes(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '-' ? std::string("\\-") : std::string(1, ch);
  return out;
}

TEST_F(GenerateTest, EveryOutputNamesEveryCommandAndOption) {
  const std::vector<Entry> walk = Walk(Generate("commands"));
  ASSERT_GT(walk.size(), 100u);
  const std::string man = Generate("man");
  const std::string bash = Generate("bash");
  const std::string zsh = Generate("zsh");
  const std::string fish = Generate("fish");
  for (const Entry& e : walk) {
    const std::string leaf = e.command.substr(e.command.rfind(' ') + 1);
    // The root's options are the man page's GLOBAL OPTIONS.
    const std::string man_start =
        e.command == "berth" ? ".SH GLOBAL OPTIONS" : ".SS \"" + RoffDashes(e.command) + "\"";
    if (e.option.empty()) {
      if (e.command == "berth") continue;
      EXPECT_NE(man.find(man_start), std::string::npos)
          << e.command << " has no section in the man page";
      EXPECT_NE(bash.find("'" + e.command + "')"), std::string::npos) << e.command << ": bash";
      EXPECT_NE(zsh.find("'" + e.command + "')"), std::string::npos) << e.command << ": zsh";
      EXPECT_NE(zsh.find("'" + leaf + ":"), std::string::npos) << e.command << ": zsh";
      EXPECT_NE(fish.find("-a '" + leaf + "'"), std::string::npos) << e.command << ": fish";
      continue;
    }
    // Within the command's own part of each output.
    const std::string dashes = e.option.rfind("--", 0) == 0 ? "--" : "-";
    const std::string bare = e.option.substr(dashes.size());
    auto part = [&](const std::string& text, const std::string& start,
                    const std::string& next) -> std::string {
      size_t from = text.find(start);
      if (from == std::string::npos) return "";
      size_t to = text.find(next, from + start.size());
      return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
    };
    const std::string man_part = part(man, man_start, e.command == "berth" ? ".SH " : ".SS ");
    EXPECT_NE(man_part.find(RoffDashes(e.option)), std::string::npos)
        << e.command << " " << e.option << ": man page";
    const std::string bash_part = part(bash, "    '" + e.command + "') words=", "\n");
    EXPECT_NE(bash_part.find(e.option), std::string::npos)
        << e.command << " " << e.option << ": bash";
    const std::string zsh_part = part(zsh, "    '" + e.command + "')\n", ";;");
    EXPECT_NE(zsh_part.find("'" + e.option + ":"), std::string::npos)
        << e.command << " " << e.option << ": zsh";
    const std::string fish_flag = (dashes == "--" ? " -l '" : " -s '") + bare + "'";
    bool in_fish = false;
    for (const std::string& line : Split(fish, '\n'))
      in_fish = in_fish || (line.find("__berth_is \\'" + e.command + "\\''") != std::string::npos &&
                            line.find(fish_flag) != std::string::npos);
    EXPECT_TRUE(in_fish) << e.command << " " << e.option << ": fish";
  }
}

TEST_F(GenerateTest, TheBashCompletionCompletesCommandsAndOptions) {
  const std::optional<std::string> bash = FindInPath("bash");
  REQUIRE_FEATURE(bash.has_value(), "bash is not installed");
  const std::string script =
      Generate("bash") +
      "COMP_WORDS=(berth pol); COMP_CWORD=1; _berth; echo \"${COMPREPLY[*]}\"\n"
      "COMP_WORDS=(berth policy ch); COMP_CWORD=2; _berth; echo \"${COMPREPLY[*]}\"\n"
      "COMP_WORDS=(berth sandbox --time); COMP_CWORD=2; _berth; echo \"${COMPREPLY[*]}\"\n";
  RunResult r = RunProgram({*bash, "-c", script}, {{"PATH", "/usr/bin:/bin"}}, "/");
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "policy\ncheck\n--timeout\n") << r.Describe();
}

TEST_F(GenerateTest, AnUnknownOutputIsAUsageError) {
  RunResult r = Berth({"__generate", "html"});
  EXPECT_EQ(r.exit_code, 64) << r.Describe();
}

}  // namespace
}  // namespace berth::e2e
