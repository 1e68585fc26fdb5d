// replay/dist/host_identity.h: what a rank's report says of its host.
#include "replay/dist/host_identity.h"

#include <gtest/gtest.h>

namespace tracetwin::replay::dist {
namespace {

TEST(HostIdentity, LoopbackAddresses) {
  for (const char* addr : {"localhost", "::1", "127.0.0.1", "127.1.2.3"}) {
    EXPECT_TRUE(isLoopback(addr)) << addr;
  }
  for (const char* addr : {"10.0.0.1", "node0", "1270.0.0.1", "::2"}) {
    EXPECT_FALSE(isLoopback(addr)) << addr;
  }
}

// Two processes of this host read the same clock id: the boot id, else the host name.
TEST(HostIdentity, TheClockIsNamed) {
  EXPECT_FALSE(clockId().empty());
  EXPECT_EQ(clockId(), clockId());
}

}  // namespace
}  // namespace tracetwin::replay::dist
