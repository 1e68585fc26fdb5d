"""Shared pieces of the bundled workloads (not a workload itself: the leading _ hides it)."""

import _amp


def training_step(model, loss_fn, optimizer, inputs, target):
    """Return a closure doing one full training step: zero_grad, forward, loss, backward, step.

    Under capture.py --amp (`_amp.configure`) the forward and loss run under autocast instead.
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    if _amp.mode() is not None:
        return _amp.training_step(model, loss_fn, optimizer, inputs, target)

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(*inputs), target)
        loss.backward()
        optimizer.step()
        return loss

    return step
