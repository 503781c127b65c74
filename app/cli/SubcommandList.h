#pragma once
// The subcommands registered on one CLI11 app (kvscope-cli itself, or a group such as `calibrate`),
// each with what runs it: after parsing, runParsed() runs the one the command line named.
#include <optional>
#include <utility>
#include <vector>

#include "app/cli/CliCommands.h"

namespace kvscope::cli {

class SubcommandList {
 public:
  explicit SubcommandList(CLI::App& parent) : parent_(&parent) {}

  // `adder` registers one subcommand on the parent and returns what runs it.
  void add(Command (*adder)(CLI::App&)) {
    const std::size_t before = parent_->get_subcommands({}).size();
    Command run = adder(*parent_);
    commands_.emplace_back(parent_->get_subcommands({})[before], std::move(run));
  }
  // The exit code of the parsed subcommand's run; nullopt when none was parsed.
  std::optional<int> runParsed() const {
    for (const auto& [sub, run] : commands_)
      if (sub->parsed()) return run();
    return std::nullopt;
  }

 private:
  CLI::App* parent_;
  std::vector<std::pair<CLI::App*, Command>> commands_;
};

}  // namespace kvscope::cli
