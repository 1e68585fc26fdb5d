// CPU time of this process, read around each measured iteration. On a host
// with more runnable threads than cores (this 2-core VM at load average 6-8)
// a step's wall time includes the time the scheduler kept it waiting: the
// same eager bf16 MLP step took 16-24 ms of wall time for 11-12 ms of CPU
// time. Both sides of a fidelity comparison can report their CPU time too,
// which waiting does not move. Torch-free.
#pragma once

namespace tracetwin::replay {

// CPU time (user + system, all threads) of the process so far in ms; a
// negative value where the OS does not say.
double processCpuMs();

}  // namespace tracetwin::replay
