#define _GNU_SOURCE
#include "CShims.h"
#include <stdio.h>
#include <unistd.h>

void cshims_stdout_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

void cshims_write_stdout(const char *text, size_t length) { fwrite(text, 1, length, stdout); }
void cshims_write_stderr(const char *text, size_t length) { fwrite(text, 1, length, stderr); fflush(stderr); }
void cshims_flush_stdout(void) { fflush(stdout); }
