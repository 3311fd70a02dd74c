//go:build !linux || !cgo

package main

// mallocArenas is the cap on glibc's malloc arenas (see mallocarenas.go);
// without cgo on Linux there is nothing to cap.
const mallocArenas = 2

// capMallocArenas does nothing: the cap is for glibc's allocator.
func capMallocArenas(int) bool { return false }
