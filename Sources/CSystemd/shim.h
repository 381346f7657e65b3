#pragma once
/* Import Swift's Glibc first so libc declarations stay owned by SwiftGlibc and do not
   vanish from files that import only Glibc (swift-linux-notes G1). */
#if __has_feature(modules)
#pragma clang module import SwiftGlibc
#endif
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
