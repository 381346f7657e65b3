#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* POSIX/Linux calls Swift cannot see without _GNU_SOURCE
   (docs/swift-on-linux.md#gnu-only-declarations-are-invisible) or that are macros. Every
   function returns the raw result and leaves errno as the call set it; the Swift syscall
   layer turns that into a typed Errno and retries EINTR. */

/* accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK). */
int cshims_accept4_cloexec_nonblock(int fd);

/* getsockopt(SO_PEERCRED): 0 and the peer's pid/uid/gid, or -1 with errno. */
int cshims_peer_cred(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid);

/* getgrouplist(3) for `user` with primary group `gid`. On entry *count is the capacity
   of `groups`; returns the number of groups, which exceeds the capacity when the buffer
   was too small (call again with that many). */
int cshims_grouplist(const char *user, uint32_t gid, uint32_t *groups, int *count);

/* socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0). */
int cshims_unix_socket(int type);

/* bind/connect a unix socket to `path`; -1 with errno ENAMETOOLONG when it does not fit
   sun_path. Linux abstract sockets are not supported (not needed). */
int cshims_unix_bind(int fd, const char *path);
int cshims_unix_connect(int fd, const char *path);

/* send(fd, buf, len, MSG_NOSIGNAL): a peer that went away gives EPIPE, not SIGPIPE. */
ssize_t cshims_send_nosignal(int fd, const void *buf, size_t len);

/* The errno text, thread-safe (GNU strerror_r's return convention differs from XSI;
   hiding that here keeps Swift independent of it). */
void cshims_strerror(int code, char *buf, size_t len);

/* Self-pipe signal delivery: installs (sigaction, SA_RESTART) an async-signal-safe
   handler for `signo` that writes the signal number as one byte to `fd`, a non-blocking
   pipe. fd -1 sets the disposition to SIG_IGN instead. Returns 0, or -1 with errno. */
int cshims_signal_to_fd(int signo, int fd);

/* mallopt(M_ARENA_MAX, n) (malloc.h is not part of Swift's Glibc module): 1 on success,
   0 when glibc refused the value. */
int cshims_malloc_arena_max(int n);

/* mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD): 1 when both were taken. Fixing
   them turns off glibc's dynamic raising of the mmap threshold. */
int cshims_malloc_fixed_thresholds(int mmap_threshold, int trim_threshold);

/* malloc_trim(0): gives free heap pages back to the kernel; 1 when some were. */
int cshims_malloc_trim(void);

/* madvise(MADV_DONTNEED) over the read-only segments of the program and of every shared
   library (code and read-only data, never written, so the pages come back unchanged from the
   file): the bytes it covered, or -1 with errno. */
long cshims_release_code_pages(void);

/* The program's .rodata when the link put it in its writable segment (Swift objects mark some
   .rodata input sections writable): made read-only once (whole pages), its range returned.
   The bytes sealed, 0 when the program has no such section, or -1 with errno. */
long cshims_seal_program_rodata(uintptr_t *lo, uintptr_t *hi);

/* madvise(MADV_DONTNEED) over the present pages of that sealed .rodata that are still the
   file's (pagemap(5); the loader's relocated copies stay): the bytes dropped, 0 when there is
   no such section, or -1 with errno. Seals it first if need be. */
long cshims_release_program_rodata(void);

/* pthread_setname_np(pthread_self(), name): names the calling thread (15 bytes kept) for
   top -H and /proc/PID/task/TID/comm. Returns 0 or an error number. */
int cshims_name_this_thread(const char *name);

/* timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC). */
int cshims_timer_create(void);
/* A one-shot expiry `nanoseconds` from now (at least 1 ns: 0 would disarm). */
int cshims_timer_arm(int fd, int64_t nanoseconds);

/* epoll(7) with a 64-bit token per descriptor instead of the event struct, which glibc
   declares packed on x86-64 (its layout is then the C compiler's business, not Swift's).
   epoll_create1(EPOLL_CLOEXEC); level-triggered EPOLLIN registration; removal; and a wait
   that fills `tokens` with up to `max` ready tokens (the count, or -1 with errno). */
int cshims_epoll_create(void);
int cshims_epoll_add_readable(int epfd, int fd, uint64_t token);
int cshims_epoll_remove(int epfd, int fd);
int cshims_epoll_wait_tokens(int epfd, uint64_t *tokens, int max, int timeout_ms);
