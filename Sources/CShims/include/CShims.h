#pragma once
#if __has_feature(modules)
#pragma clang module import SwiftGlibc
#endif
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What Swift cannot import or may not touch under Swift 6 strict concurrency:
   _GNU_SOURCE declarations (struct ucred, accept4), macros, and stdio globals. */

/* Line-buffer stdout so a daemon under systemd (stdout on a pipe) flushes per line
   (docs/swift-on-linux.md#stdout-and-stderr-are-off-limits-under-swift-6). */
void cshims_stdout_line_buffered(void);
/* Write to stderr/stdout without touching the non-Sendable FILE* globals from Swift (ditto). */
void cshims_write_stdout(const char *text, size_t length);
void cshims_write_stderr(const char *text, size_t length);
void cshims_flush_stdout(void);

#include "cshims_posix.h"
