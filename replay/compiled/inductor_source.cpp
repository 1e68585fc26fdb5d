#include "replay/compiled/inductor_source.h"

#include <fmt/core.h>

#include <cctype>
#include <map>
#include <regex>
#include <string_view>

namespace tracetwin::replay::compiled {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Python source read a character at a time: whether it is inside a quoted
// string, and how deep in brackets.
struct BracketWalk {
  int depth = 0;
  char quote = 0;
  // Returns text[*i] when it stands outside quotes (a bracket then counted
  // in `depth`), else 0; steps over an escaped character inside quotes.
  char step(std::string_view text, size_t* i) {
    const char c = text[*i];
    if (quote != 0) {
      if (c == '\\')
        ++*i;
      else if (c == quote)
        quote = 0;
      return 0;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      return 0;
    }
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    return c;
  }
};

// The text between the bracket at `open` and its partner, skipping brackets
// inside quoted strings. npos when unbalanced.
size_t matchingClose(std::string_view text, size_t open) {
  BracketWalk walk;
  for (size_t i = open; i < text.size(); ++i) {
    const char c = walk.step(text, &i);
    if ((c == ')' || c == ']' || c == '}') && walk.depth == 0) return i;
  }
  return std::string_view::npos;
}

// Splits at commas outside brackets and quotes.
std::vector<std::string_view> splitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  BracketWalk walk;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (walk.step(text, &i) == ',' && walk.depth == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (std::string_view last = trim(text.substr(start)); !last.empty()) parts.push_back(last);
  return parts;
}

std::string unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
    return std::string(s.substr(1, s.size() - 2));
  return std::string(s);
}

// {'key': value, 0: value} -> ordered (key text, value text); keys unquoted.
std::vector<std::pair<std::string, std::string>> dictEntries(std::string_view body) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view entry : splitTopLevel(body)) {
    // The key is quoted or a number: the first ':' outside quotes ends it.
    size_t colon = std::string_view::npos;
    char quote = 0;
    for (size_t i = 0; i < entry.size(); ++i) {
      const char c = entry[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == ':') {
        colon = i;
        break;
      }
    }
    if (colon == std::string_view::npos) continue;
    out.emplace_back(unquote(entry.substr(0, colon)), std::string(trim(entry.substr(colon + 1))));
  }
  return out;
}

// The body of the dict literal that follows `'key':` in `text`, or nullopt.
bool dictAfter(std::string_view text, std::string_view key, std::string_view* body) {
  const std::string quoted = fmt::format("'{}'", key);
  size_t at = text.find(quoted);
  if (at == std::string_view::npos) return false;
  size_t open = text.find('{', at + quoted.size());
  if (open == std::string_view::npos) return false;
  // Only whitespace and the colon may sit between the key and its dict.
  for (size_t i = at + quoted.size(); i < open; ++i) {
    if (text[i] != ':' && !std::isspace(static_cast<unsigned char>(text[i]))) return false;
  }
  size_t close = matchingClose(text, open);
  if (close == std::string_view::npos) return false;
  *body = text.substr(open + 1, close - open - 1);
  return true;
}

bool isIndex(const std::string& key) {
  return !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
}

// The `def name(args):` of the jitted kernel.
void parseDef(std::string_view text, const std::string& path, InductorKernelSource& out) {
  size_t jit = text.find("@triton.jit");
  size_t def = text.find("\ndef ", jit == std::string_view::npos ? 0 : jit);
  if (def == std::string_view::npos) {
    throw SourceFormatError(fmt::format("{}: no `def` of a Triton kernel", path));
  }
  def += 5;
  const size_t open = text.find('(', def);
  if (open == std::string_view::npos) {
    throw SourceFormatError(fmt::format("{}: the kernel's `def` has no argument list", path));
  }
  out.kernel_name = std::string(trim(text.substr(def, open - def)));
  const size_t close = matchingClose(text, open);
  if (close == std::string_view::npos) {
    throw SourceFormatError(
        fmt::format("{}: the argument list of {} is not closed", path, out.kernel_name));
  }
  for (std::string_view arg : splitTopLevel(text.substr(open + 1, close - open - 1))) {
    const size_t cut = arg.find_first_of(":=");
    std::string_view name = trim(arg.substr(0, cut));
    if (name.empty() || name.front() == '*') continue;
    const bool constexpr_annotated =
        cut != std::string_view::npos && arg.find("constexpr", cut) != std::string_view::npos;
    out.args.push_back({std::string(name), constexpr_annotated ? "constexpr" : ""});
  }
}

}  // namespace

InductorKernelSource parseInductorKernelSource(const std::string& text, const std::string& path) {
  InductorKernelSource out;
  parseDef(text, path, out);

  std::string_view signature;
  if (!dictAfter(text, "signature", &signature)) {
    throw SourceFormatError(
        fmt::format("{}: no triton_meta 'signature' for {} (not an Inductor kernel file?)", path,
                    out.kernel_name));
  }
  std::map<std::string, std::string> types;
  for (auto& [key, value] : dictEntries(signature)) {
    std::string name = key;
    if (isIndex(key)) {  // older Inductor: by position
      const size_t i = std::stoul(key);
      if (i >= out.args.size()) {
        throw SourceFormatError(fmt::format("{}: signature index {} beyond the {} arguments of {}",
                                            path, i, out.args.size(), out.kernel_name));
      }
      name = out.args[i].name;
    }
    types[name] = unquote(value);
  }
  for (KernelArg& a : out.args) {
    auto it = types.find(a.name);
    if (it != types.end()) {
      a.type = it->second;
    } else if (a.type.empty()) {
      throw SourceFormatError(fmt::format("{}: argument {} of {} has no type in the signature",
                                          path, a.name, out.kernel_name));
    }
  }

  if (std::string_view constants; dictAfter(text, "constants", &constants)) {
    for (auto& [key, value] : dictEntries(constants)) {
      if (isIndex(key)) {
        const size_t i = std::stoul(key);
        if (i < out.args.size()) out.constants.insert(out.args[i].name);
      } else {
        out.constants.insert(key);
      }
    }
  }

  static const std::regex kGrid(R"('grid_type':\s*'(\w+)')");
  static const std::regex kHeuristic(R"(@triton_heuristics\.(\w+)\s*\()");
  std::smatch m;
  if (std::regex_search(text, m, kGrid)) out.grid_type = m[1].str();
  if (std::regex_search(text, m, kHeuristic)) out.heuristic = m[1].str();
  return out;
}

}  // namespace tracetwin::replay::compiled
