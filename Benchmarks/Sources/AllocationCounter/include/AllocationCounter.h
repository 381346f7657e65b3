#pragma once
#include <stdint.h>

/* The benchmark's allocation counter: this target defines a global `malloc` that counts
   calls while counting is on, and is linked into strap-bench alone (the shipped programs
   must keep the C library's malloc; a sanitizer build replaces malloc itself). */

/* Number of malloc calls counted so far. */
uint64_t allocation_counter_count(void);
/* Turns counting on (non-zero) or off; off costs one relaxed atomic load per malloc. */
void allocation_counter_enable(int enabled);
