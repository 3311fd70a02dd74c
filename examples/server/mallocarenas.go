//go:build linux && cgo

package main

/*
#include <stdlib.h>

// MALLOC_ARENAS is the server's cap on glibc's malloc arenas.
#define MALLOC_ARENAS 2

#if defined(__GLIBC__)
#include <malloc.h>
// cap_malloc_arenas caps glibc's malloc arenas at n unless MALLOC_ARENA_MAX
// is in the environment (glibc read it at start-up). It returns 1 when it
// set the cap.
static int cap_malloc_arenas(int n) {
	if (getenv("MALLOC_ARENA_MAX") != NULL) return 0;
	return mallopt(M_ARENA_MAX, n) == 1;
}
#else
static int cap_malloc_arenas(int n) { return 0; }
#endif

// The cap is set when the program is loaded, before the Go runtime starts
// threads: glibc gives a thread its arena at the thread's first malloc,
// and arenas made before the cap stay.
__attribute__((constructor)) static void cap_malloc_arenas_at_load(void) {
	cap_malloc_arenas(MALLOC_ARENAS);
}
*/
import "C"

// mallocArenas is the server's default cap on glibc's malloc arenas, set
// when the program is loaded (MALLOC_ARENA_MAX in the environment
// overrides it). SQLite allocates its page caches with malloc on whichever
// thread runs the query, and glibc gives each thread an arena of its own
// (up to 8 per core), each keeping the memory freed in it: without the
// cap, most of the server's C memory was free blocks spread over a dozen
// arenas.
const mallocArenas = C.MALLOC_ARENAS

// capMallocArenas caps the C allocator's arenas at n when the C library is
// glibc and MALLOC_ARENA_MAX is not set in the environment, and reports
// whether it did.
func capMallocArenas(n int) bool {
	return C.cap_malloc_arenas(C.int(n)) == 1
}
