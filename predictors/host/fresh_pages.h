// Outputs the allocator maps fresh for every call. glibc serves an
// allocation at or above its mmap threshold with a new mapping (when its
// heap has no free chunk that large, which a heap of smaller tensors rarely
// has) and unmaps it on free, so each call of an op with such an output
// faults in every page of it: a relu writing 64 MiB took 25.4 ms fresh
// against 2.9 ms into memory already mapped (1.37 us a page; 1.35 at 128
// and 512 MiB; Debian's torch 1.13 on the development VM). No kernel model
// holds it: calibrate times every op in mapped memory (cli/host_malloc.h).
#pragma once

#include <cstdint>

#include "core/graph.h"
#include "core/sparse_layout.h"

namespace tracetwin::predictors {

// The threshold tracetwin's measuring commands pin (cli/host_malloc.cpp, as
// scripts/capture.py runs the original): glibc's own ceiling on 64-bit.
inline constexpr int64_t kMmapThresholdBytes = int64_t{32} << 20;
inline constexpr int64_t kPageBytes = 4096;

struct FreshBytes {
  // `op`'s outputs on storages none of its inputs hold (memory the op
  // allocated; not views, in-place or out= results) whose tensor is at least
  // kMmapThresholdBytes, each storage once: faulted in by the op, unmapped
  // when freed after their last use.
  double outputs = 0;
  // Buffers the op maps and unmaps itself (oneDNN's reorders, below).
  double temporaries = 0;
};
FreshBytes freshMappedBytes(const core::Node& op);

// The arrays of the sparse COO tensors `op` makes (core/sparse_layout.h), each
// at least kMmapThresholdBytes: values of nnz rows and indices of
// sparse_dim x nnz int64. A trace records a sparse tensor with no bytes, so
// freshMappedBytes cannot see them, yet embedding_bag's sparse backward
// allocates its gradient every step and AccumulateGrad's add_ into the
// cleared .grad reallocates it by concatenation: sweep set 3's 163,840-row
// gradient of a 64-wide table (42 MB of values) cost each of them 21-22 ms in
// the replay against 6.4 and 2.8 predicted without its 10,240 fresh pages.
// Ops that only view, clear or coalesce in place allocate nothing; 0 for
// tensors of unknown nnz.
double freshSparseBytes(const core::Node& op, const core::SparseTensors& sparse);

// oneDNN computes a convolution on its blocked layout: it reorders each
// plain (NCHW) activation and gradient into a buffer of the same size and
// the result back, so each tensor of at least kMmapThresholdBytes brings a
// fresh buffer. Debian's torch, 3->64 channels 3x3 on 64x64 maps: 0.128 ms
// an image at batch 16 (16 MiB out), 0.93 at batch 64 and 0.98 at 512:
// 3.1 us more per output page, the output's fault and a buffer's fault and
// unmap. In the replay of data/h100/cnn_big the four convolutions took 2.50 s
// against 1.67 predicted with the outputs' faults alone. Bytes of those
// tensors; 0 for other ops and the native path.
double oneDnnReorderBytes(const core::Node& op);

}  // namespace tracetwin::predictors
