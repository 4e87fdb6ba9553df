package leader

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Lease is the part of a coordination.k8s.io/v1 Lease the election uses.
type Lease struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   Metadata  `json:"metadata"`
	Spec       LeaseSpec `json:"spec"`
}

// Metadata is a Lease's object metadata: its name, namespace and the
// resourceVersion a write must name (optimistic concurrency).
type Metadata struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// LeaseSpec is a Lease's spec, as client-go's resourcelock writes it.
type LeaseSpec struct {
	HolderIdentity       string     `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds int32      `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *MicroTime `json:"acquireTime,omitempty"`
	RenewTime            *MicroTime `json:"renewTime,omitempty"`
	LeaseTransitions     int32      `json:"leaseTransitions,omitempty"`
}

// MicroTime is metav1.MicroTime: RFC 3339 with microseconds.
type MicroTime struct{ time.Time }

const microLayout = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON writes t as the API server does.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.UTC().Format(microLayout))
}

// UnmarshalJSON reads a MicroTime (or a plain RFC 3339 time).
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	t.Time = v
	return err
}

// ErrNotFound is the API server's 404: no Lease of that name yet.
var ErrNotFound = errors.New("lease not found")

// ErrConflict is the API server's 409: another writer changed the Lease
// since it was read (or created it first).
var ErrConflict = errors.New("lease changed by another writer")

// Client reads and writes one Lease on the Kubernetes API server.
type Client struct {
	// Server is the API server's base URL (https://host:port).
	Server string
	// TokenFile holds the bearer token; it is read on every request, as
	// a projected service-account token is rotated in place.
	TokenFile string
	// HTTP carries the requests, trusting the cluster's CA.
	HTTP *http.Client
	// Namespace and Name name the Lease.
	Namespace, Name string
}

// ServiceAccountDir is where Kubernetes mounts a pod's token and CA.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster builds a Client for the Lease namespace/name from the pod's
// service account (dir, normally ServiceAccountDir) and the API server
// the environment names (KUBERNETES_SERVICE_HOST and _PORT). TLS is
// verified against the account's ca.crt; nothing skips it.
func InCluster(dir, namespace, name string, getenv func(string) string) (*Client, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("read the cluster's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no PEM certificate", filepath.Join(dir, "ca.crt"))
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &Client{
		Server:    "https://" + net.JoinHostPort(host, port),
		TokenFile: filepath.Join(dir, "token"),
		HTTP:      &http.Client{Transport: tr, Timeout: 10 * time.Second},
		Namespace: namespace, Name: name,
	}, nil
}

func (c *Client) collection() string {
	return c.Server + "/apis/coordination.k8s.io/v1/namespaces/" + c.Namespace + "/leases"
}

// Get reads the Lease; ErrNotFound when there is none.
func (c *Client) Get(ctx context.Context) (*Lease, error) {
	return c.do(ctx, http.MethodGet, c.collection()+"/"+c.Name, nil)
}

// Create writes a new Lease; ErrConflict when one exists already.
func (c *Client) Create(ctx context.Context, l *Lease) (*Lease, error) {
	return c.do(ctx, http.MethodPost, c.collection(), l)
}

// Update replaces the Lease at l's resourceVersion; ErrConflict when it
// changed since.
func (c *Client) Update(ctx context.Context, l *Lease) (*Lease, error) {
	return c.do(ctx, http.MethodPut, c.collection()+"/"+c.Name, l)
}

func (c *Client) do(ctx context.Context, method, url string, l *Lease) (*Lease, error) {
	var body io.Reader
	if l != nil {
		l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
		l.Metadata.Name, l.Metadata.Namespace = c.Name, c.Namespace
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if err := c.authorize(req); err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("lease %s/%s: %w", c.Namespace, c.Name, err)
	}
	defer resp.Body.Close()
	return readLease(resp)
}

func (c *Client) authorize(req *http.Request) error {
	if c.TokenFile == "" {
		return nil
	}
	tok, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return fmt.Errorf("read the service-account token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	return nil
}

func readLease(resp *http.Response) (*Lease, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode == http.StatusConflict:
		return nil, ErrConflict
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("the API server answered %s", resp.Status)
	}
	var l Lease
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("the API server's Lease: %w", err)
	}
	return &l, nil
}
