//===- Args.h - Minimal command-line parsing for encc subcommands ---------===//
#ifndef ENCC_COMPILER_ARGS_H
#define ENCC_COMPILER_ARGS_H

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace encc {

/// `--name=value`, `--name value` (for options declared as taking a value),
/// `--flag`, `-o value`, and positionals. Repeated options accumulate.
struct Args {
  std::vector<std::string> positionals;
  std::map<std::string, std::vector<std::string>> options;
  std::string error; ///< set when parsing failed

  bool has(const std::string &name) const { return options.count(name) != 0; }
  std::string get(const std::string &name, const std::string &fallback = "") const {
    auto it = options.find(name);
    return it == options.end() || it->second.empty() ? fallback : it->second.back();
  }
  const std::vector<std::string> &all(const std::string &name) const {
    static const std::vector<std::string> none;
    auto it = options.find(name);
    return it == options.end() ? none : it->second;
  }
};

/// Whether `s` has the shape of an option: "-x" or "--name[=value]" with a
/// name of letters, digits and inner dashes ("---", "--=x", "-5 degrees" and
/// "--> arrow" do not).
inline bool optionShaped(const std::string &s) {
  const size_t dashes = s.rfind("--", 0) == 0 ? 2 : 1;
  const size_t end = std::min(s.find('='), s.size());
  if (s.size() <= dashes || end <= dashes || !std::isalpha(static_cast<unsigned char>(s[dashes])))
    return false;
  for (size_t i = dashes; i < end; ++i)
    if (!std::isalnum(static_cast<unsigned char>(s[i])) && s[i] != '-')
      return false;
  return s[end - 1] != '-';
}

/// `valued` names the options that take a value; `flags` those that do not.
/// Anything else starting with '-' is an error, except for commands whose
/// positionals are texts (`textPositionals`: embed, rerank, tokenize): there
/// a string that is not option-shaped ("---", "--=x", "-5 degrees") is a
/// text. "--" ends the options in every command.
inline Args parseArgs(int argc, char **argv, int first, const std::set<std::string> &valued,
                      const std::set<std::string> &flags, bool textPositionals = false) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--") {
      for (++i; i < argc; ++i)
        a.positionals.push_back(argv[i]);
      break;
    }
    if (s.size() < 2 || s[0] != '-' || (s[1] != '-' && s != "-o" && s != "-h" && s != "-v" && s != "-q") ||
        (textPositionals && !optionShaped(s))) {
      a.positionals.push_back(s);
      continue;
    }
    std::string name = s, value;
    bool hasValue = false;
    if (auto eq = s.find('='); eq != std::string::npos) {
      name = s.substr(0, eq);
      value = s.substr(eq + 1);
      hasValue = true;
    }
    const size_t start = name.find_first_not_of('-');
    name = start == std::string::npos ? std::string() : name.substr(start);
    if (name == "o")
      name = "output";
    if (name == "h")
      name = "help";
    if (name == "v")
      name = "verbose";
    if (name == "q")
      name = "quiet";
    if (valued.count(name)) {
      if (!hasValue) {
        if (i + 1 >= argc) {
          a.error = "option --" + name + " needs a value";
          return a;
        }
        value = argv[++i];
      }
      a.options[name].push_back(value);
    } else if (flags.count(name)) {
      if (hasValue) {
        a.error = "option --" + name + " takes no value";
        return a;
      }
      a.options[name].push_back("");
    } else {
      a.error = "unknown option '" + s + "'" +
                (textPositionals ? " (a text that begins with '-' goes after --)" : "");
      return a;
    }
  }
  return a;
}

} // namespace encc

#endif // ENCC_COMPILER_ARGS_H
