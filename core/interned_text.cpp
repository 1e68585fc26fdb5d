// The process-wide table of InternedText, with a per-thread cache in front:
// the reader interns one text per value (~100k for a 27 MB trace), and a
// mutex per lookup would serialise the ranks read on parallel threads.
#include "core/interned_text.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <ostream>
#include <unordered_map>

#include "core/text.h"

namespace tracetwin::core {
namespace {

// Texts by value; a node-based set never moves its elements, so the pointers
// handed out stay valid. Never destroyed: InternedTexts in static objects
// may outlive any destruction order (it stays reachable, so no leak report).
struct InternTable {
  std::mutex mutex;
  std::deque<std::string> texts;  // stable addresses
  std::unordered_map<std::string_view, const std::string*> index;  // views of `texts`
};

InternTable& internTable() {
  static InternTable* table = new InternTable();  // NOLINT: see above
  return *table;
}

uint64_t load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Cheap hash of a short text: its length, first and last 8 bytes. Types and
// devices differ in those; a collision only costs a miss to the table.
size_t quickTextHash(std::string_view text) {
  uint64_t head = 0, tail = 0;
  const size_t n = text.size();
  if (n >= 8) {
    head = load8(text.data());
    tail = load8(text.data() + n - 8);
  } else {
    std::memcpy(&head, text.data(), n);
  }
  uint64_t h = (head * 0x9e3779b97f4a7c15ULL) ^ (tail * 0xc2b2ae3d27d4eb4fULL) ^ n;
  return static_cast<size_t>(h ^ (h >> 29));
}

// Direct-mapped, per thread: 1024 slots hold a trace's distinct types,
// devices, names and schemas (a few hundred) with room to spare; a clash
// only re-asks the table.
constexpr size_t kInternCacheSlots = 1024;

bool sameText(const std::string& a, std::string_view b) {
  // Most texts are 8-30 bytes (types, names): their first and last 8 bytes,
  // then memcmp for the middle of longer ones (schemas are 50-300 bytes).
  const size_t n = b.size();
  if (a.size() != n) return false;
  if (n < 8) return text::equalShort(a, b);
  if (load8(a.data()) != load8(b.data()) || load8(a.data() + n - 8) != load8(b.data() + n - 8))
    return false;
  return n <= 16 || std::memcmp(a.data() + 8, b.data() + 8, n - 16) == 0;
}

}  // namespace

const std::string& InternedText::emptyText() {
  static const std::string empty;
  return empty;
}

const std::string* InternedText::intern(std::string_view text) {
  // Most nodes have no kernel file, backend or schema.
  if (text.empty()) return nullptr;
  thread_local std::array<const std::string*, kInternCacheSlots> cache{};
  const size_t slot = quickTextHash(text) & (kInternCacheSlots - 1);
  const std::string* hit = cache[slot];
  if (hit != nullptr && sameText(*hit, text)) return hit;
  InternTable& table = internTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.index.find(text);
  if (it == table.index.end()) {
    const std::string& stored = table.texts.emplace_back(text);
    it = table.index.emplace(std::string_view(stored), &stored).first;
  }
  cache[slot] = it->second;
  return it->second;
}

std::ostream& operator<<(std::ostream& os, const InternedText& text) { return os << text.str(); }

}  // namespace tracetwin::core
