package testfake

import (
	"errors"
	"strings"
)

// AssertNoSecret fails the test if err is nil, or if secret appears in
// the message of err or of any error in its Unwrap chain.
func AssertNoSecret(t T, err error, secret string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for ; err != nil; err = errors.Unwrap(err) {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error contains the API key: %q", err)
		}
	}
}
