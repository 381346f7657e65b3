#define _GNU_SOURCE
#include "cshims_posix.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

/* The program's .rodata can sit in its writable segment: the Swift compiler marks some of its
 * .rodata input sections writable (those holding pointers the loader relocates), and the
 * linker gives the output section the union of its inputs' flags. CodePages, which only
 * touches segments read-only in the file, then never hands back what start-up read of it
 * (about 1 MiB of strapd's resident set; docs/benchmarks.md). Nothing writes it after the
 * loader, so it is made read-only once (a stray write faults instead of being lost), and its
 * pages that are still the file's (not the loader's relocated copies) are dropped like code. */

static pthread_once_t seal_once = PTHREAD_ONCE_INIT;
static uintptr_t sealed_lo, sealed_hi;
static int seal_errno;

static int read_at(int fd, void *buf, size_t n, off_t at) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, at + (off_t)done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

/* The load bias of the program: where its program headers are, less where the file says. */
static uintptr_t program_bias(void) {
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t n = (size_t)getauxval(AT_PHNUM);
    for (size_t i = 0; ph && i < n; i++)
        if (ph[i].p_type == PT_PHDR) return (uintptr_t)ph - ph[i].p_vaddr;
    return 0;
}

static void seal(void) {
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) { seal_errno = errno; return; }
    ElfW(Ehdr) eh;
    ElfW(Shdr) sh[256], names;
    char name[8];
    if (read_at(fd, &eh, sizeof eh, 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shnum > 256 || eh.e_shstrndx >= eh.e_shnum ||
        read_at(fd, sh, eh.e_shnum * sizeof sh[0], (off_t)eh.e_shoff) != 0) {
        seal_errno = ENOEXEC;
        close(fd);
        return;
    }
    names = sh[eh.e_shstrndx];
    uintptr_t bias = program_bias(), page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_type != SHT_PROGBITS || (sh[i].sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE) ||
            sh[i].sh_name + sizeof name > names.sh_size ||
            read_at(fd, name, sizeof name, (off_t)(names.sh_offset + sh[i].sh_name)) != 0 ||
            strcmp(name, ".rodata") != 0)
            continue;
        /* Whole pages only: the pages it shares with .got or .data stay writable. */
        uintptr_t lo = (bias + sh[i].sh_addr + page - 1) & ~(page - 1);
        uintptr_t hi = (bias + sh[i].sh_addr + sh[i].sh_size) & ~(page - 1);
        if (hi > lo && mprotect((void *)lo, hi - lo, PROT_READ) == 0) {
            sealed_lo = lo;
            sealed_hi = hi;
        } else if (hi > lo) {
            seal_errno = errno;
        }
        break;
    }
    close(fd);
}

long cshims_seal_program_rodata(uintptr_t *lo, uintptr_t *hi) {
    pthread_once(&seal_once, seal);
    if (seal_errno) { errno = seal_errno; return -1; }
    if (lo) *lo = sealed_lo;
    if (hi) *hi = sealed_hi;
    return (long)(sealed_hi - sealed_lo);
}

static int drop(uintptr_t lo, uintptr_t hi, long *released) {
    if (madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0) return -1;
    *released += (long)(hi - lo);
    return 0;
}

/* pagemap(5): bit 63 present, bit 61 a file page (for a private mapping: not the process's
 * own copy). Only such pages are dropped; a relocated page is the loader's work and stays. */
long cshims_release_program_rodata(void) {
    long sealed = cshims_seal_program_rodata(NULL, NULL);
    if (sealed <= 0) return sealed;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    long released = 0;
    uint64_t entries[512];
    uintptr_t run = 0;   /* start of the current run of droppable pages, 0 for none */
    for (uintptr_t at = sealed_lo; at < sealed_hi;) {
        size_t n = (sealed_hi - at) / page;
        if (n > 512) n = 512;
        if (read_at(fd, entries, n * sizeof entries[0], (off_t)(at / page * sizeof entries[0])) != 0) {
            close(fd);
            errno = EIO;
            return -1;
        }
        for (size_t i = 0; i < n; i++, at += page) {
            int droppable = (entries[i] >> 63 & 1) && (entries[i] >> 61 & 1);
            if (droppable && !run) run = at;
            if (!droppable && run) {
                if (drop(run, at, &released) != 0) { close(fd); return -1; }
                run = 0;
            }
        }
    }
    int failed = run && drop(run, sealed_hi, &released) != 0;
    close(fd);
    return failed ? -1 : released;
}
