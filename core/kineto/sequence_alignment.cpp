#include "core/kineto/sequence_alignment.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/errors.h"

namespace tracetwin::core::kineto {
namespace {

// Traceback moves, one byte per cell.
enum Move : uint8_t { kDiag = 0, kUp = 1, kLeft = 2, kStart = 3 };

}  // namespace

bool compatible(const AlignItem& a, const AlignItem& b) {
  if (a.name != b.name) return false;
  return a.sequence < 0 || b.sequence < 0 || a.sequence == b.sequence;
}

std::vector<int64_t> alignSequences(const std::vector<AlignItem>& a,
                                    const std::vector<AlignItem>& b,
                                    const AlignmentOptions& options, const std::string& what) {
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<int64_t> partner(n, -1);
  if (n == 0 || m == 0) return partner;
  // The same ops on both sides, in the same order (the ET and the profiled
  // step of one capture): every item paired in order, no gap, which the
  // table would find too (it could trade a pair only for a sequence bonus),
  // without its n x m cells (adds5k: 25,000 x 25,000, over the limit).
  if (n == m) {
    bool pairwise = true;
    for (size_t i = 0; i < n && pairwise; ++i) pairwise = compatible(a[i], b[i]);
    if (pairwise) {
      for (size_t i = 0; i < n; ++i) partner[i] = static_cast<int64_t>(i);
      return partner;
    }
  }
  const auto cells = static_cast<int64_t>(n + 1) * static_cast<int64_t>(m + 1);
  if (cells > options.max_cells) {
    throw InputError(fmt::format(
        "{}: aligning {} ET ops with {} Kineto events needs {} cells (limit {}); the traces share "
        "no sequence numbers or record-function ids to narrow the window - cut the Kineto trace "
        "to the iteration the ET records",
        what, n, m, cells, options.max_cells));
  }
  // score[i][j]: best score aligning a[0..i) with b[0..j), where leading b
  // items are free (row 0 is all zeros). Two rolling rows + full traceback.
  std::vector<int64_t> prev(m + 1, 0), cur(m + 1, 0);
  std::vector<uint8_t> move((n + 1) * (m + 1), kStart);
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = prev[0] + options.gap;
    move[i * (m + 1)] = kUp;
    for (size_t j = 1; j <= m; ++j) {
      int64_t best = std::numeric_limits<int64_t>::min();
      uint8_t how = kUp;
      if (compatible(a[i - 1], b[j - 1])) {
        int64_t bonus =
            (a[i - 1].sequence >= 0 && b[j - 1].sequence >= 0) ? options.sequence_bonus : 0;
        best = prev[j - 1] + options.match + bonus;
        how = kDiag;
      }
      int64_t up = prev[j] + options.gap;  // a[i-1] unpaired
      if (up > best) {
        best = up;
        how = kUp;
      }
      int64_t left = cur[j - 1] + options.gap;  // b[j-1] unpaired
      if (left > best) {
        best = left;
        how = kLeft;
      }
      cur[j] = best;
      move[i * (m + 1) + j] = how;
    }
    std::swap(prev, cur);
  }
  // Trailing b items are free: end at the best cell of the last row.
  size_t j = static_cast<size_t>(std::max_element(prev.begin(), prev.end()) - prev.begin());
  size_t i = n;
  while (i > 0 && j > 0) {
    switch (move[i * (m + 1) + j]) {
      case kDiag:
        partner[i - 1] = static_cast<int64_t>(j - 1);
        --i;
        --j;
        break;
      case kUp:
        --i;
        break;
      case kLeft:
        --j;
        break;
      default:
        i = 0;
        break;
    }
  }
  return partner;
}

}  // namespace tracetwin::core::kineto
