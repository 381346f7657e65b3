#define _GNU_SOURCE
#include "CShims.h"
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>
#include <stdatomic.h>
#include <dlfcn.h>

void cshims_stdout_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

void cshims_write_stdout(const char *text, size_t length) { fwrite(text, 1, length, stdout); }
void cshims_write_stderr(const char *text, size_t length) { fwrite(text, 1, length, stderr); fflush(stderr); }
void cshims_flush_stdout(void) { fflush(stdout); }

size_t cshims_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks;
}

static _Atomic uint64_t malloc_calls;
static _Atomic int counting;

uint64_t cshims_malloc_count(void) { return atomic_load(&malloc_calls); }
void cshims_malloc_counting(int enabled) { atomic_store(&counting, enabled); }

/* Count calls by interposing malloc; glibc exports __libc_malloc so no dlsym recursion. */
extern void *__libc_malloc(size_t size);
void *malloc(size_t size) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&malloc_calls, 1, memory_order_relaxed);
    return __libc_malloc(size);
}
