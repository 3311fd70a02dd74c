//go:build race

package httpapi_test

// raceDetector reports whether the tests run with -race, whose shadow
// memory makes the resident set grow with every allocation.
const raceDetector = true
