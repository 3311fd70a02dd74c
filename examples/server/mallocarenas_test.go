package main

import (
	"os"
	"testing"
)

// The server caps glibc's arenas by default but leaves an operator's
// MALLOC_ARENA_MAX alone.
func TestMallocArenaCapLeavesTheEnvironmentsValue(t *testing.T) {
	t.Setenv("MALLOC_ARENA_MAX", "")
	if err := os.Unsetenv("MALLOC_ARENA_MAX"); err != nil {
		t.Fatal(err)
	}
	if !capMallocArenas(mallocArenas) {
		t.Skip("the C library is not glibc, or no cgo on Linux: nothing to cap")
	}
	t.Setenv("MALLOC_ARENA_MAX", "16")
	if capMallocArenas(mallocArenas) {
		t.Error("capMallocArenas set its cap although MALLOC_ARENA_MAX is in the environment")
	}
}
