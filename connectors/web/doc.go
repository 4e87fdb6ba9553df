// Package web is the embedded default connector: a single-page chat served
// from the binary, with an HTTP API for scripts and editor plugins.
package web
