package web

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// A reader that opens an event stream and never reads is disconnected by
// the write deadline, instead of holding its handler, its frames and its
// socket buffers for good (issue 12, 6b).
func TestStalledStreamReaderIsDisconnected(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{}, nil)
	c.writeTimeout = 200 * time.Millisecond
	ended := make(chan struct{}, 1)
	c.streamEnded = func() { ended <- struct{}{} }
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Listener.Addr())
	// The stream is open once a post reaches it; then the server writes
	// into a socket nobody reads until the kernel's buffers are full.
	text := strings.Repeat("x", 32000)
	ctx := context.Background()
	for i := 0; i < 3000; i++ {
		if _, err := c.Post(ctx, dest("ops", ""), connectors.Message{Text: text}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ended:
			return
		default:
		}
	}
	select {
	case <-ended:
	case <-time.After(wait):
		t.Fatal("a stream whose reader stopped reading was never disconnected")
	}
}
