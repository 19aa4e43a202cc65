#include "tools/usage_error.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace shardpack {
namespace {

// Edits (insert, delete, replace, or swap two neighbours: "pakc" is one from "pack") from a to b.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The long flags ("--threads") of `app`, its help flag included.
std::vector<std::string> FlagsOf(const CLI::App& app) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  }
  return flags;
}

// The first argument that looks like a flag `app` does not have ("--thread" of "--thread=2").
std::string UnknownFlag(const CLI::App& app, const std::vector<std::string>& args) {
  const std::vector<std::string> flags = FlagsOf(app);
  for (const std::string& arg : args) {
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) return flag;
  }
  return "";
}

}  // namespace

std::string ClosestName(const std::string& typed, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& name : names) {
    const size_t d = name.rfind(typed, 0) == 0 ? 1 : EditDistance(typed, name);
    if (best.empty() || d < best_distance) best = name, best_distance = d;
  }
  return !best.empty() && best_distance <= std::max<size_t>(1, typed.size() / 3) ? best : "";
}

int ReportUsageError(CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args) {
  if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
  }
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  std::string why;
  std::string command = "shardpack";
  if (parsed.empty()) {
    const auto typed = std::find_if(args.begin(), args.end(), [](const std::string& a) { return a[0] != '-'; });
    std::string list;
    for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
    if (typed == args.end()) {
      why = "give a command: " + list + " (shardpack --help says what each does)";
    } else {
      const std::string meant = ClosestName(*typed, commands);
      why = "unknown command '" + *typed + "'" + (meant.empty() ? "" : "; did you mean " + meant + "?") +
            " (commands: " + list + ")";
    }
  } else {
    const CLI::App& sub = *parsed.front();
    command = sub.get_name();
    const std::string unknown = UnknownFlag(sub, args);
    if (!unknown.empty()) {
      const std::string meant = ClosestName(unknown, FlagsOf(sub));
      why = "unknown option " + unknown + (meant.empty() ? "" : "; did you mean " + meant + "?") + " (shardpack " +
            command + " --help lists its options)";
    } else {
      why = error.what();
      if (!why.empty()) why[0] = char(std::tolower(static_cast<unsigned char>(why[0])));
      why += " (shardpack " + command + " --help lists its options)";
    }
  }
  std::fprintf(stderr, "%s failed: %s\n", command.c_str(), why.c_str());
  return 2;
}

Status InFlagWords(const Status& s, const std::vector<std::pair<std::string, std::string>>& names) {
  if (s.ok()) return s;
  std::string m = s.message();
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const auto& [name, flag] : names) {
    for (size_t at = m.find(name); at != std::string::npos; at = m.find(name, at)) {
      const size_t end = at + name.size();
      if ((at > 0 && (word_char(m[at - 1]) || m[at - 1] == '-')) || (end < m.size() && word_char(m[end]))) {
        at = end;
        continue;
      }
      m.replace(at, name.size(), flag);
      at += flag.size();
    }
  }
  return s.WithMessage(m);
}

int Fail(const char* command, const Status& s) {
  std::fprintf(stderr, "%s failed: %s\n", command, s.message().c_str());
  return 1;
}

}  // namespace shardpack
