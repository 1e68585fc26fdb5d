#include "replay/dist/host_identity.h"

#include <unistd.h>

#include <fstream>

namespace tracetwin::replay::dist {

std::string hostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::string clockId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (in >> id) return id;
  return hostName();
}

bool isLoopback(const std::string& addr) {
  return addr == "localhost" || addr == "::1" || addr.rfind("127.", 0) == 0;
}

}  // namespace tracetwin::replay::dist
