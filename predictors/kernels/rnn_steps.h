// What ATen's native RNN ops (aten::lstm, aten::gru, aten::rnn_tanh,
// aten::rnn_relu) run, op by op, so the calibrated families can predict
// them where the trace records no children it can use.
//
// Why: a trace captured on a GPU records cuDNN's kernels under aten::lstm
// (aten::_cudnn_rnn), which no CPU model knows, and the family fallback on
// the op's bytes put a 2-layer LSTM at 0.015 ms against 18.7 ms replayed
// here (data/h100/lstm). On a CPU, ATen (RNN.cpp, 1.13 to 2.x) runs per
// layer and direction one linear over the whole sequence (the input
// projection), then per time step a linear of the hidden state and the
// cell's gate arithmetic, then stacks the step outputs: 93% of that LSTM's
// time is its 65 addmm calls (profiled with Debian's torch 1.13).
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "predictors/kernels/stand_in_ops.h"

namespace tracetwin::predictors {

// The ops of `rnn` (each with how many times it runs), in the order ATen runs them within a layer
// (the step's ops once, with count = time steps). Empty when `rnn` is not one of the four ops, is
// the packed-sequence overload, or its arguments cannot be read (no input tensor, parameter list
// too short for the layers).
std::vector<StandInOp> rnnSteps(const core::Node& rnn);

}  // namespace tracetwin::predictors
