#pragma once
/* Import Swift's Glibc first so libc declarations stay owned by SwiftGlibc and do not
   vanish from files that import only Glibc
   (docs/swift-on-linux.md#glibc-declarations-vanish-module-ownership). */
#if __has_feature(modules)
#pragma clang module import SwiftGlibc
#endif
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
