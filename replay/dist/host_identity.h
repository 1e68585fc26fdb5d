// Who and where a rank is, as a distributed replay reports it: the host's
// name, the clock its times are on, and whether a rendezvous address is this
// host's loopback. Torch-free.
#pragma once

#include <string>

namespace tracetwin::replay::dist {

// gethostname(); empty when it fails.
std::string hostName();

// Processes on one kernel share CLOCK_MONOTONIC (steady_clock); the boot id
// names that clock better than a host name, which containers repeat. The host
// name where there is no boot id.
std::string clockId();

// "localhost", "::1" or 127.x.y.z.
bool isLoopback(const std::string& addr);

}  // namespace tracetwin::replay::dist
