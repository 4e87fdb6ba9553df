//go:build !linux

package main

// blankProcEnviron does nothing where there is no /proc/self/environ.
func blankProcEnviron([]string) {}
