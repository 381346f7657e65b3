#define _GNU_SOURCE
#include "cshims_posix.h"
#include <errno.h>
#include <pthread.h>
#include <grp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

int cshims_accept4_cloexec_nonblock(int fd) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

int cshims_peer_cred(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) return -1;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits on Linux");

int cshims_grouplist(const char *user, uint32_t gid, uint32_t *groups, int *count) {
    int n = *count;
    int r = getgrouplist(user, (gid_t)gid, (gid_t *)groups, &n);
    *count = n;
    return r < 0 ? n : r;
}

int cshims_unix_socket(int type) {
    return socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

static int fill(struct sockaddr_un *addr, const char *path) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof addr->sun_path) { errno = ENAMETOOLONG; return -1; }
    memcpy(addr->sun_path, path, len + 1);
    return 0;
}

int cshims_unix_bind(int fd, const char *path) {
    struct sockaddr_un addr;
    if (fill(&addr, path) < 0) return -1;
    return bind(fd, (struct sockaddr *)&addr, sizeof addr);
}

int cshims_unix_connect(int fd, const char *path) {
    struct sockaddr_un addr;
    if (fill(&addr, path) < 0) return -1;
    return connect(fd, (struct sockaddr *)&addr, sizeof addr);
}

ssize_t cshims_send_nosignal(int fd, const void *buf, size_t len) {
    return send(fd, buf, len, MSG_NOSIGNAL);
}

void cshims_strerror(int code, char *buf, size_t len) {
    if (len == 0) return;
    const char *text = strerror_r(code, buf, len);
    if (text != buf) { strncpy(buf, text, len - 1); buf[len - 1] = 0; }
}

#include <signal.h>

static volatile sig_atomic_t signal_fds[_NSIG];

static void signal_to_fd(int signo) {
    int saved = errno;
    int fd = signal_fds[signo];
    if (fd >= 0) {
        unsigned char byte = (unsigned char)signo;
        /* A full pipe already holds a pending wake-up; losing this byte is harmless. */
        (void)!write(fd, &byte, 1);
    }
    errno = saved;
}

int cshims_signal_to_fd(int signo, int fd) {
    if (signo <= 0 || signo >= _NSIG) { errno = EINVAL; return -1; }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    signal_fds[signo] = fd;
    sa.sa_handler = fd >= 0 ? signal_to_fd : SIG_IGN;
    return sigaction(signo, &sa, NULL);
}

#include <malloc.h>

int cshims_malloc_arena_max(int n) {
    return mallopt(M_ARENA_MAX, n);
}

int cshims_malloc_fixed_thresholds(int mmap_threshold, int trim_threshold) {
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
}

int cshims_malloc_trim(void) {
    return malloc_trim(0);
}

#include <link.h>
#include <sys/mman.h>

#include <sys/auxv.h>

/* Every loaded object's read-only segments (code, read-only data, Swift metadata), the
 * program's and each shared library's: never written, so their pages can always be read back
 * from the file. Writable segments (data, and RELRO, which the loader wrote before making it
 * read-only) are left alone, and so are the vDSO, which is no file, and any object with text
 * relocations, whose read-only segments the loader wrote into. */
static int release_read_only_segments(struct dl_phdr_info *info, size_t size, void *out) {
    (void)size;
    long *total = out;
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
            if (vdso && vdso >= lo && vdso < hi) return 0;
        } else if (ph->p_type == PT_DYNAMIC) {
            /* Text relocations: the loader wrote into this object's read-only segments. */
            for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr); d->d_tag != DT_NULL; d++) {
                if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL))) return 0;
            }
        }
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_filesz;
        /* Whole pages inside the segment only: a page it shares with a writable neighbour
         * keeps its mapping. */
        uintptr_t start = (lo + page - 1) & ~(page - 1), end = hi & ~(page - 1);
        if (end <= start) continue;
        if (madvise((void *)start, end - start, MADV_DONTNEED) != 0) { *total = -1; return 1; }
        *total += (long)(end - start);
    }
    return 0;
}

long cshims_release_code_pages(void) {
    long total = 0;
    dl_iterate_phdr(release_read_only_segments, &total);
    if (total == 0) { errno = ENOENT; return -1; }
    return total;
}

int cshims_name_this_thread(const char *name) {
    char kept[16];
    strncpy(kept, name, sizeof kept - 1);
    kept[sizeof kept - 1] = 0;
    return pthread_setname_np(pthread_self(), kept);
}

int cshims_timer_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
}

int cshims_timer_arm(int fd, int64_t nanoseconds) {
    if (nanoseconds < 1) nanoseconds = 1;
    struct itimerspec spec = {
        .it_interval = {0, 0},
        .it_value = {(time_t)(nanoseconds / 1000000000), (long)(nanoseconds % 1000000000)},
    };
    return timerfd_settime(fd, 0, &spec, NULL);
}

#include <sys/epoll.h>

int cshims_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cshims_epoll_add_readable(int epfd, int fd, uint64_t token) {
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = token };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int cshims_epoll_remove(int epfd, int fd) {
    /* A non-null event: kernels before 2.6.9 required one, and it costs nothing. */
    struct epoll_event ev = { 0 };
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &ev);
}

int cshims_epoll_wait_tokens(int epfd, uint64_t *tokens, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) tokens[i] = events[i].data.u64;
    return n;
}
