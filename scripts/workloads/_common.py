"""Shared pieces of the bundled workloads (not a workload itself: the leading _ hides it)."""

import _amp

# Applied to each workload's model when set (capture.py --compile sets torch.compile): the step
# calls what it returns; the optimizer keeps the model's own parameters.
MODEL_WRAPPER = None


def training_step(model, loss_fn, optimizer, inputs, target):
    """Return a closure doing one full training step: zero_grad, forward, loss, backward, step.

    Under capture.py --amp (`_amp.configure`) the forward and loss run under autocast instead.
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    if MODEL_WRAPPER is not None:
        model = MODEL_WRAPPER(model)
    if _amp.mode() is not None:
        return _amp.training_step(model, loss_fn, optimizer, inputs, target)

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(*inputs), target)
        loss.backward()
        optimizer.step()
        return loss

    return step
