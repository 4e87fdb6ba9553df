package testfake

// T is what the fake and its checks need of a test; *testing.T and
// *testing.B are each one. Taking it rather than *testing.T lets a
// helper package built on these (conformance) stay free of "testing".
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Cleanup(func())
}
