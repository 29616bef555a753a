// The message of a job's commit (docs/landing.md, "The job commit"): what the job did, then
// who did it, then the `Berth-Job: ID` trailer that land and gc look for.
#pragma once

#include <string>
#include <string_view>

namespace berth::job {

// What the message is made of. Agent text is data: control characters are dropped and no
// line of it can become a Berth-Job: line.
struct CommitFacts {
  std::string summary;  // the agent's final text (masked), "" when it reported none
  std::string prompt;   // the job's prompt, "" when it had none
  std::string job;      // the job id
  std::string agent;
  std::string model;  // "" when unknown
};

// The first line of `text` with anything but spaces and markdown marks on it, trimmed and
// cut to at most 72 bytes at a word boundary ("..." marks the cut); "" when there is none.
std::string SubjectLine(std::string_view text);

// The job commit's message. With an empty `message_template` (berth's own):
//   SUBJECT                      the summary's first line, else the prompt's, else
//                                "berth: job ID (agent NAME)"
//                                (blank line, then the rest of the summary, when there is one)
//   berth job ID, agent NAME, model MODEL   (", model MODEL" only when known)
//
//   Berth-Job: ID
// With a template ([commit] message, validated by policy::CommitTemplateProblem), its
// placeholders {subject} {summary} {prompt} {job} {id} {agent} {model} are filled in,
// {{ and }} become braces; a template that comes out blank falls back to berth's own. The
// trailer always ends the message.
std::string JobCommitMessage(const CommitFacts& facts, std::string_view message_template);

}  // namespace berth::job
