//go:build !linux

package main

// releaseStartupCode does nothing where there is no MADV_PAGEOUT.
func releaseStartupCode() (int, error) { return 0, nil }
