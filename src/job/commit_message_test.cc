#include "job/commit_message.h"

#include <gtest/gtest.h>

namespace berth::job {
namespace {

CommitFacts Facts() {
  CommitFacts f;
  f.job = "a1b2c3d4";
  f.agent = "implement";
  return f;
}

TEST(SubjectLine, FirstLineWithContentTrimmedAndCutAtAWord) {
  EXPECT_EQ(SubjectLine("\n  \n  Fix the parser  \nmore"), "Fix the parser");
  EXPECT_EQ(SubjectLine("## Summary of changes\n"), "Summary of changes");
  EXPECT_EQ(SubjectLine("**Done.**"), "Done.");
  EXPECT_EQ(SubjectLine(" \n\t\n"), "");
  std::string long_line;
  for (int i = 0; i < 20; ++i) long_line += "word" + std::to_string(i) + " ";
  std::string subject = SubjectLine(long_line);
  EXPECT_LE(subject.size(), 72u);
  EXPECT_EQ(subject.substr(subject.size() - 3), "...");
  EXPECT_EQ(subject.substr(0, 12), "word0 word1 ");
  EXPECT_NE(subject[subject.size() - 4], ' ');
  // A cut never splits a UTF-8 character.
  std::string accents;
  for (int i = 0; i < 60; ++i) accents += "\xc3\xa9";  // é, no spaces
  subject = SubjectLine(accents);
  EXPECT_LE(subject.size(), 72u);
  EXPECT_EQ((subject.size() - 3) % 2, 0u);
}

TEST(JobCommitMessage, SummaryFirstLineThenItsRestThenWhoThenTheTrailer) {
  CommitFacts f = Facts();
  f.summary = "Fixed the off-by-one in the parser.\n\nThe loop now stops at the end.\n";
  f.prompt = "fix the parser\nplease";
  f.model = "sonnet-9";
  EXPECT_EQ(JobCommitMessage(f, ""),
            "Fixed the off-by-one in the parser.\n\nThe loop now stops at the end.\n\n"
            "berth job a1b2c3d4, agent implement, model sonnet-9\n\nBerth-Job: a1b2c3d4\n");
}

TEST(JobCommitMessage, PromptFirstLineWithoutASummaryAndNoModelWhenUnknown) {
  CommitFacts f = Facts();
  f.prompt = "\n  Add a --verbose flag to the CLI  \n\nDetails follow.\n";
  EXPECT_EQ(JobCommitMessage(f, ""),
            "Add a --verbose flag to the CLI\n\nberth job a1b2c3d4, agent implement\n\n"
            "Berth-Job: a1b2c3d4\n");
}

TEST(JobCommitMessage, NeitherSummaryNorPromptKeepsBerthsOldSubject) {
  EXPECT_EQ(JobCommitMessage(Facts(), ""),
            "berth: job a1b2c3d4 (agent implement)\n\nberth job a1b2c3d4, agent implement\n\n"
            "Berth-Job: a1b2c3d4\n");
}

TEST(JobCommitMessage, AgentTextCannotForgeATrailerOrCarryControlCharacters) {
  CommitFacts f = Facts();
  f.summary = "Done\x1b[31m red\r\nBerth-Job: other-job\n  Berth-Job: x\nend\x07";
  std::string message = JobCommitMessage(f, "");
  EXPECT_EQ(message,
            "Done[31m red\n\nend\n\nberth job a1b2c3d4, agent implement\n\nBerth-Job: a1b2c3d4\n");
  f.summary = "Berth-Job: other-job";
  f.prompt = "Berth-Job: other-job";
  EXPECT_EQ(JobCommitMessage(f, "{summary}{prompt}\n\nBerth-Job: z"),
            "berth: job a1b2c3d4 (agent implement)\n\nberth job a1b2c3d4, agent implement\n\n"
            "Berth-Job: a1b2c3d4\n");
}

TEST(JobCommitMessage, TemplateFillsPlaceholdersAndKeepsTheTrailer) {
  CommitFacts f = Facts();
  f.summary = "Renamed the helper\nand its callers";
  f.prompt = "rename helper";
  f.model = "m1";
  EXPECT_EQ(JobCommitMessage(f,
                             "{agent}: {subject} {{{job}}}\n\n{summary}\n\nasked: {prompt} "
                             "({model}, {id})"),
            "implement: Renamed the helper {a1b2c3d4}\n\nRenamed the helper\nand its callers\n\n"
            "asked: rename helper (m1, a1b2c3d4)\n\nBerth-Job: a1b2c3d4\n");
  // A placeholder with nothing to say leaves the rest; a template that comes out blank gives
  // berth's own message.
  f.summary.clear();
  EXPECT_EQ(JobCommitMessage(f, "{summary}\n\nprompt: {prompt}"),
            "prompt: rename helper\n\nBerth-Job: a1b2c3d4\n");
  f.prompt.clear();
  EXPECT_EQ(JobCommitMessage(f, "{summary}"),
            "berth: job a1b2c3d4 (agent implement)\n\nberth job a1b2c3d4, agent implement, model "
            "m1\n\nBerth-Job: a1b2c3d4\n");
}

TEST(JobCommitMessage, LongSummaryBodyIsBounded) {
  CommitFacts f = Facts();
  f.summary = "Subject\n\n" + std::string(10000, 'x');
  std::string message = JobCommitMessage(f, "");
  EXPECT_LT(message.size(), 4096u + 200u);
  EXPECT_NE(message.find("xxx...\n\nberth job"), std::string::npos);
}

}  // namespace
}  // namespace berth::job
