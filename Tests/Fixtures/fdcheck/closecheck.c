/* Preloaded into the plain `swift test` run (scripts/fdcheck.sh, docs/testing.md): a close()
 * that fails with EBADF is a descriptor closed twice, and the second close, when it comes
 * after the number was handed out again, closes somebody else's file (a store segment, a
 * pipe). Most runs catch such a bug as EBADF long before it bites; this records where. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int (*next_close)(int);

int close(int fd) {
    if (!next_close) next_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    int result = next_close(fd);
    if (result == 0 || errno != EBADF) return result;
    int saved = errno;
    const char *dir = getenv("FDCHECK_LOG");
    if (dir && fd >= 0) {
        char name[32] = {0}, path[512];
        int comm = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
        if (comm >= 0) {
            ssize_t n = read(comm, name, sizeof name - 1);
            if (n > 0 && name[n - 1] == '\n') name[n - 1] = 0;
            next_close(comm);
        }
        snprintf(path, sizeof path, "%s/ebadf.%d", dir, (int)getpid());
        int out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (out >= 0) {
            void *frames[32];
            dprintf(out, "=== close(%d) EBADF in %s\n", fd, name);
            backtrace_symbols_fd(frames, backtrace(frames, 32), out);
            next_close(out);
        }
    }
    errno = saved;
    return result;
}
