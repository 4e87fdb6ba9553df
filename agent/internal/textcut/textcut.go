// Package textcut cuts text to about a number of bytes without splitting
// a UTF-8 sequence: the loop shortens old tool results with it, the tools
// cut command output.
package textcut

// Head is about the first n bytes of s.
func Head(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:min(n, len(s))]
}

// Tail is about the last n bytes of s.
func Tail(s string, n int) string {
	i := max(len(s)-n, 0)
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}
