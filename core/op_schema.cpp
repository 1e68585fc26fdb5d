// Parser for the operator schema strings the observer records in `op_schema`,
// the same grammar as PyTorch's native_functions.yaml signatures:
//   ns::name[.overload](arg, arg, *, kwarg=default) -> ret | (ret, ret)
#include "core/op_schema.h"

#include <fmt/core.h>

#include <string_view>

#include "core/errors.h"

namespace tracetwin::core {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

class SchemaParser {
 public:
  SchemaParser(const std::string& text, const std::string& context)
      : text_(text), context_(context) {}

  OpSchema parse() {
    OpSchema schema;
    const size_t open = text_.find('(');
    if (open == std::string::npos) fail(text_.size(), "'(' after the operator name");
    parseQualifiedName(std::string_view(text_).substr(0, open), schema);
    const size_t close = matchingClose(open);
    parseArguments(open + 1, close, schema);
    parseReturns(close + 1, schema);
    return schema;
  }

 private:
  [[noreturn]] void fail(size_t column, const char* expected) const {
    throw InputError(fmt::format("{}: malformed op_schema \"{}\" at column {}: expected {}",
                                 context_, text_, column, expected));
  }

  void parseQualifiedName(std::string_view full, OpSchema& schema) const {
    full = trim(full);
    if (full.empty()) fail(0, "an operator name before '('");
    const size_t sep = full.find("::");
    std::string_view rest = full;
    if (sep != std::string_view::npos) {
      schema.ns = std::string(full.substr(0, sep));
      rest = full.substr(sep + 2);
    }
    const size_t dot = rest.find('.');
    schema.name = std::string(rest.substr(0, dot));
    if (dot != std::string_view::npos) schema.overload = std::string(rest.substr(dot + 1));
    if (schema.name.empty()) fail(sep + 2, "an operator name after '::'");
  }

  // Walks [begin, end) past quoted defaults, calling visit(i, c, depth) at
  // each bracket and comma with the nesting depth after it; returns the
  // first index where visit returns true, or `end`.
  template <typename Visit>
  size_t walk(size_t begin, size_t end, Visit visit) const {
    int depth = 0;
    for (size_t i = begin; i < end; ++i) {
      const char c = text_[i];
      if (c == '"' || c == '\'') {
        i = closingQuote(i);
        continue;
      }
      if (c == '(' || c == '[') {
        ++depth;
      } else if (c == ')' || c == ']') {
        --depth;
      } else if (c != ',') {
        continue;
      }
      if (visit(i, c, depth)) return i;
    }
    return end;
  }

  // Index of the bracket closing the one at `open`, skipping quoted defaults.
  size_t matchingClose(size_t open) const {
    const size_t close = walk(open, text_.size(), [](size_t, char c, int depth) {
      return (c == ')' || c == ']') && depth == 0;
    });
    if (close == text_.size()) fail(text_.size(), "a closing ')'");
    return close;
  }

  size_t closingQuote(size_t at) const {
    const size_t end = text_.find(text_[at], at + 1);
    if (end == std::string::npos) fail(at, "a closing quote");
    return end;
  }

  // Splits [begin, end) at depth-0 commas; returns (begin, end) pairs.
  std::vector<std::pair<size_t, size_t>> splitTopLevel(size_t begin, size_t end) const {
    std::vector<std::pair<size_t, size_t>> parts;
    size_t start = begin;
    walk(begin, end, [&](size_t i, char c, int depth) {
      if (c == ',' && depth == 0) {
        parts.emplace_back(start, i);
        start = i + 1;
      }
      return false;
    });
    if (!trim(std::string_view(text_).substr(start, end - start)).empty() || !parts.empty()) {
      parts.emplace_back(start, end);
    }
    return parts;
  }

  void parseArguments(size_t begin, size_t end, OpSchema& schema) const {
    bool kwarg_only = false;
    for (const auto& [b, e] : splitTopLevel(begin, end)) {
      const std::string_view part = trim(std::string_view(text_).substr(b, e - b));
      if (part == "*") {
        kwarg_only = true;
        continue;
      }
      if (part == "...") {
        schema.is_vararg = true;
        continue;
      }
      if (part.empty()) fail(b, "an argument between commas");
      SchemaArgument arg = parseArgument(part, b);
      arg.kwarg_only = kwarg_only;
      schema.arguments.push_back(std::move(arg));
    }
  }

  void parseReturns(size_t after_args, OpSchema& schema) const {
    std::string_view rest = trim(std::string_view(text_).substr(after_args));
    if (rest.empty()) return;  // some recorded schemas stop at ')'
    if (rest.substr(0, 2) != "->") fail(after_args, "'->' before the return types");
    const size_t start = text_.find("->", after_args) + 2;
    size_t first = start;
    while (first < text_.size() && text_[first] == ' ') ++first;
    if (first >= text_.size()) fail(first, "a return type after '->'");
    if (text_[first] == '(') {
      const size_t close = matchingClose(first);
      if (!trim(std::string_view(text_).substr(close + 1)).empty())
        fail(close + 1, "end of schema");
      for (const auto& [b, e] : splitTopLevel(first + 1, close)) {
        const std::string_view part = trim(std::string_view(text_).substr(b, e - b));
        if (part == "...") {
          continue;
        }
        schema.returns.push_back(parseArgument(part, b));
      }
      return;
    }
    schema.returns.push_back(parseArgument(trim(std::string_view(text_).substr(first)), first));
  }

  // "Tensor(a!) self", "int[2] stride=1", "str reduce=\"mean\"", "Tensor".
  SchemaArgument parseArgument(std::string_view part, size_t column) const {
    SchemaArgument arg;
    const size_t eq = findTopLevel(part, '=');
    std::string_view decl = part;
    if (eq != std::string_view::npos) {
      arg.default_value = std::string(trim(part.substr(eq + 1)));
      decl = trim(part.substr(0, eq));
    }
    // The name is the last depth-0 token; a lone token is a type (returns).
    const size_t space = findLastTopLevelSpace(decl);
    std::string_view type = decl;
    if (space != std::string_view::npos) {
      arg.name = std::string(trim(decl.substr(space + 1)));
      type = trim(decl.substr(0, space));
    }
    if (type.empty()) fail(column, "an argument type");
    arg.type = stripAliasAnnotation(type, arg);
    return arg;
  }

  static size_t findTopLevel(std::string_view s, char wanted) {
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (c == wanted && depth == 0) return i;
    }
    return std::string_view::npos;
  }

  static size_t findLastTopLevelSpace(std::string_view s) {
    int depth = 0;
    size_t found = std::string_view::npos;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (c == ' ' && depth == 0) found = i;
    }
    return found;
  }

  // "Tensor(a!)[]" -> type "Tensor[]", alias "a", mutable. Annotations can be
  // "(a)", "(a!)", "(a -> *)", "(a! -> a|b)"; the alias set is the leading name.
  static std::string stripAliasAnnotation(std::string_view type, SchemaArgument& arg) {
    const size_t open = type.find('(');
    if (open == std::string_view::npos) return std::string(type);
    const size_t close = type.find(')', open);
    if (close == std::string_view::npos) return std::string(type);
    const std::string_view note = type.substr(open + 1, close - open - 1);
    // "Dict(str, Tensor)" is a container type, not an alias annotation.
    if (note.find(',') != std::string_view::npos) return std::string(type);
    size_t n = 0;
    while (n < note.size() && note[n] != '!' && note[n] != ' ' && note[n] != '-') ++n;
    arg.alias = std::string(note.substr(0, n));
    arg.is_mutable = note.find('!') != std::string_view::npos;
    std::string out(type.substr(0, open));
    out.append(type.substr(close + 1));
    return out;
  }

  const std::string& text_;
  const std::string& context_;
};

}  // namespace

OpSchema parseOpSchema(const std::string& text, const std::string& context) {
  return SchemaParser(text, context).parse();
}

}  // namespace tracetwin::core
