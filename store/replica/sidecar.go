package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrSidecarDown is a sidecar that does not answer on its control socket
// (not running, or restarting).
var ErrSidecarDown = errors.New("the Litestream sidecar does not answer")

// ErrNotReplicating is a sidecar that answers but does not replicate the
// database asked about: it restarted, and forgot what it was given.
var ErrNotReplicating = errors.New("the Litestream sidecar does not replicate this database")

// Sidecar is the Litestream process beside this opsbot, reached over its
// control socket (Litestream's `socket:` setting).
type Sidecar struct {
	socket  string
	timeout time.Duration
	client  *http.Client
}

// NewSidecar reaches the sidecar of s.
func NewSidecar(s Settings) *Sidecar {
	s = s.WithDefaults()
	return &Sidecar{socket: s.Socket, timeout: s.SyncTimeout, client: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", s.Socket)
		},
	}}}
}

// Register has the sidecar replicate the database at path to replica
// (a generation's URL).
func (c *Sidecar) Register(ctx context.Context, path, replica string) error {
	var res struct {
		Status string `json:"status"`
	}
	if err := c.call(ctx, "/register", map[string]any{"path": path, "replica_url": replica}, &res); err != nil {
		return err
	}
	if res.Status != "registered" {
		// "already_registered": it replicates path elsewhere (an earlier
		// generation's replica) and would go on doing so.
		return fmt.Errorf("the Litestream sidecar already replicates %s; it must be unregistered first", path)
	}
	return nil
}

// Unregister has the sidecar stop replicating path; a path it does not
// replicate is no error.
func (c *Sidecar) Unregister(ctx context.Context, path string) error {
	return c.call(ctx, "/unregister", map[string]any{"path": path, "timeout": 5}, nil)
}

// Sync has the sidecar copy every committed transaction of path to its
// replica, and returns once the replica holds them.
func (c *Sidecar) Sync(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var res struct {
		TXID       uint64 `json:"txid"`
		Replicated uint64 `json:"replicated_txid"`
	}
	secs := max(int(c.timeout/time.Second), 1)
	if err := c.call(ctx, "/sync", map[string]any{"path": path, "wait": true, "timeout": secs}, &res); err != nil {
		return err
	}
	if res.Replicated < res.TXID {
		return fmt.Errorf("the replica holds transaction %d of %d", res.Replicated, res.TXID)
	}
	return nil
}

func (c *Sidecar) call(ctx context.Context, path string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://litestream"+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the Litestream sidecar did not answer within %s", c.timeout)
		}
		return fmt.Errorf("%w on its control socket %s (is it running, with `socket: {enabled: true, path: %s}`?)", ErrSidecarDown, c.socket, c.socket)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(data, &e)
		msg := strings.TrimSpace(e.Error)
		if msg == "" {
			msg = strings.TrimSpace(string(data))
		}
		if resp.StatusCode == http.StatusNotFound && path == "/sync" {
			return fmt.Errorf("%w (%s)", ErrNotReplicating, msg)
		}
		return errors.New("the Litestream sidecar refused: " + msg)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
