package hosts

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Host key verification failures; test with errors.Is. The error itself
// is a *HostKeyError that says what to do.
var (
	// ErrUnknownHostKey: known_hosts has no key for the host.
	ErrUnknownHostKey = errors.New("unknown host key")
	// ErrHostKeyChanged: known_hosts has keys for the host and the
	// server's key is none of them — possibly an attack.
	ErrHostKeyChanged = errors.New("host key changed")
	// ErrHostKeyRevoked: the server's key is marked @revoked.
	ErrHostKeyRevoked = errors.New("host key revoked")
)

// HostKeyError is a refused host key, with what was presented and known.
type HostKeyError struct {
	Host       string        // inventory name
	Address    string        // host:port dialled
	KnownHosts string        // the known_hosts file consulted
	Presented  ssh.PublicKey // the server's key
	// Known holds the keys known_hosts has for the address (changed key)
	// or the revoked entry.
	Known []knownhosts.KnownKey
	kind  error
}

// Unwrap returns ErrUnknownHostKey, ErrHostKeyChanged or ErrHostKeyRevoked.
func (e *HostKeyError) Unwrap() error { return e.kind }

// Error says what was refused, why, and how to fix a legitimate change.
func (e *HostKeyError) Error() string {
	who := fmt.Sprintf("%s (%s)", e.Host, e.Address)
	got := e.Presented.Type() + " " + ssh.FingerprintSHA256(e.Presented)
	entry := knownhosts.Normalize(e.Address)
	host, port, _ := net.SplitHostPort(e.Address)
	scan := fmt.Sprintf("ssh-keyscan -p %s %s >> %s", port, host, e.KnownHosts)
	switch e.kind {
	case ErrHostKeyChanged:
		var known []string
		for _, k := range e.Known {
			known = append(known, fmt.Sprintf("%s:%d has %s %s", k.Filename, k.Line, k.Key.Type(), ssh.FingerprintSHA256(k.Key)))
		}
		return fmt.Sprintf("%s: HOST KEY CHANGED: the server presented %s, but %s. "+
			"This may be an attack (someone intercepting the connection), so the connection was refused. "+
			"If the change is legitimate (the host was reinstalled or its key rotated), verify the new fingerprint "+
			"out of band, remove the old entry with `ssh-keygen -R '%s' -f %s`, then add the new key, e.g. `%s`",
			who, got, strings.Join(known, ", "), entry, e.KnownHosts, scan)
	case ErrHostKeyRevoked:
		return fmt.Sprintf("%s: the server presented %s, which %s:%d marks @revoked; the connection was refused",
			who, got, e.Known[0].Filename, e.Known[0].Line)
	}
	return fmt.Sprintf("%s: unknown host key: the server presented %s and %s has no key for %s, so the connection was refused. "+
		"Verify the fingerprint out of band, then add the key, e.g. `%s`", who, got, e.KnownHosts, entry, scan)
}

// hostKeys verifies servers against a known_hosts file, re-reading it
// when it changes so that an operator's fix applies without a restart.
type hostKeys struct {
	file string

	mu    sync.Mutex
	mtime time.Time
	size  int64
	cb    ssh.HostKeyCallback
}

// callback returns the verifier of the file's current contents.
func (k *hostKeys) callback() (ssh.HostKeyCallback, error) {
	if k.file == "" {
		return nil, errors.New("ssh.known_hosts is not set: it is required to verify SSH hosts")
	}
	fi, err := os.Stat(k.file)
	if err != nil {
		return nil, fmt.Errorf("ssh.known_hosts: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cb != nil && fi.ModTime().Equal(k.mtime) && fi.Size() == k.size {
		return k.cb, nil
	}
	cb, err := knownhosts.New(k.file)
	if err != nil {
		return nil, fmt.Errorf("ssh.known_hosts: %w", err)
	}
	k.cb, k.mtime, k.size = cb, fi.ModTime(), fi.Size()
	return cb, nil
}

// verifier returns the HostKeyCallback for one host plus the host key
// algorithms to ask for: only those of the keys known_hosts has for it.
// Without that the server might present a key of another type than the
// known one, which would look exactly like a changed key.
func (k *hostKeys) verifier(h Host) (ssh.HostKeyCallback, []string, error) {
	cb, err := k.callback()
	if err != nil {
		return nil, nil, err
	}
	verify := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(hostname, remote, key)
		var keyErr *knownhosts.KeyError
		var revoked *knownhosts.RevokedError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &revoked):
			return &HostKeyError{h.Name, h.Address, k.file, key, []knownhosts.KnownKey{revoked.Revoked}, ErrHostKeyRevoked}
		case errors.As(err, &keyErr) && len(keyErr.Want) > 0:
			return &HostKeyError{h.Name, h.Address, k.file, key, keyErr.Want, ErrHostKeyChanged}
		case errors.As(err, &keyErr):
			return &HostKeyError{h.Name, h.Address, k.file, key, nil, ErrUnknownHostKey}
		}
		return err
	}
	return verify, knownAlgorithms(cb, h.Address), nil
}

// probeKey is a key no known_hosts holds: checking it lists the host's
// known keys in the KeyError.
var probeKey = func() ssh.PublicKey {
	pub, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public())
	if err != nil {
		panic(err)
	}
	return pub
}()

// knownAlgorithms lists the host key algorithms matching the keys
// known_hosts has for addr; nil (any) when it has none.
func knownAlgorithms(cb ssh.HostKeyCallback, addr string) []string {
	var keyErr *knownhosts.KeyError
	if err := cb(addr, &net.TCPAddr{IP: net.IPv4zero}, probeKey); !errors.As(err, &keyErr) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, k := range keyErr.Want {
		for _, a := range algorithmsFor(k.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

// algorithmsFor maps a key type to the signature algorithms that prove it.
func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}
