// Aligns two sequences of op records (an ET thread and a Kineto thread, both in
// execution order) when no shared id links them: a semi-global alignment
// (Needleman-Wunsch scoring, free gaps at both ends of the Kineto side) so
// that ops present on one side only cost one gap and do not shift the rest,
// unlike a naive zip.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracetwin::core::kineto {

struct AlignItem {
  std::string_view name;
  int64_t sequence = -1;  // autograd sequence number, -1 when absent
};

// Two items may be paired when their names are equal and their sequence
// numbers do not contradict (either side -1, or equal).
bool compatible(const AlignItem& a, const AlignItem& b);

struct AlignmentOptions {
  // Scores: a pair +2 (+1 more when both carry the same sequence number), a
  // gap -1. With +2/-1, skipping a stray op on either side costs 1 while a
  // pair gains 2, so one missing op never drags its neighbours off their
  // partners; matching an op from another iteration would cost one gap per
  // op in between (hundreds), so repeated iterations do not get interleaved.
  int match = 2;
  int sequence_bonus = 1;
  int gap = -1;
  // Largest DP table (|a| x |b| cells, one byte each) before giving up with
  // an InputError: 1e8 cells = 100 MB and about a second.
  int64_t max_cells = 100'000'000;
};

// Returns, for each item of `a`, the index of its partner in `b` or -1.
// Pairs are strictly increasing in both sequences. Gaps before the first and
// after the last pair are free on the `b` side (b may hold several iterations
// around the one `a` records). `what` names the inputs in errors.
std::vector<int64_t> alignSequences(const std::vector<AlignItem>& a,
                                    const std::vector<AlignItem>& b,
                                    const AlignmentOptions& options, const std::string& what);

}  // namespace tracetwin::core::kineto
