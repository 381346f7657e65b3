#include "AllocationCounter.h"
#include <stdatomic.h>
#include <stddef.h>

static _Atomic uint64_t malloc_calls;
static _Atomic int counting;

uint64_t allocation_counter_count(void) { return atomic_load(&malloc_calls); }
void allocation_counter_enable(int enabled) { atomic_store(&counting, enabled); }

/* Counts calls by interposing malloc: the executable's definition wins over the C
   library's for the whole process. glibc exports __libc_malloc, so there is no dlsym
   recursion. */
extern void *__libc_malloc(size_t size);
void *malloc(size_t size) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&malloc_calls, 1, memory_order_relaxed);
    return __libc_malloc(size);
}
