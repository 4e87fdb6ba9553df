package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/opsbot/opsbot/connectors"
)

// How a client's name is known.
type authKind int

const (
	// selfNamed: a client on this machine without a key; its name is
	// whatever it says.
	selfNamed authKind = iota + 1
	// viaProxy: a trusted reverse proxy signed the person in.
	viaProxy
	// personalKey: the client sent a key of web.users.
	personalKey
	// sharedKey: the client sent the shared web.api_key (a script).
	sharedKey
)

func (k authKind) String() string {
	switch k {
	case selfNamed:
		return "self-named"
	case viaProxy:
		return "proxy"
	case personalKey:
		return "personal-key"
	case sharedKey:
		return "api-key"
	}
	return ""
}

// identity is who a request speaks for. name is empty for a self-named
// client until its request body says it.
type identity struct {
	kind authKind
	name string
	// addr is the client's address, which tells self-named clients apart
	// for the post rate.
	addr string
}

// The user headers a signing-in proxy sets (oauth2-proxy's names), the
// first one present wins.
var proxyUserHeaders = []string{"X-Auth-Request-User", "X-Forwarded-User"}

// selfNamedMark follows a self-named person's name where it must be told
// from a signed-in one: in the user id the bot sees when the chat also has
// signed-in people (so an approver rule naming alice is not met by a
// local "alice"), and in the name cards show.
const selfNamedMark = " (self-named)"

// identify says who r speaks for, or why it may not pass (a status and a
// message). Order: a trusted proxy's user header, a key (personal or
// shared), a client on this machine. A proxy header from any other
// address is ignored.
func (c *Connector) identify(r *http.Request) (identity, int, string) {
	addr := remoteAddr(r)
	if c.trustedProxy(addr) {
		for _, h := range proxyUserHeaders {
			if name := r.Header.Get(h); name != "" {
				if msg := checkUser(name); msg != "" {
					return identity{}, http.StatusForbidden, "the signing-in proxy's " + h + " is not a usable name (" + msg + "): fix the proxy's user mapping"
				}
				c.people.claim(name) // a signed-in name is not the client's choice: never refused
				return identity{kind: viaProxy, name: name, addr: addr.String()}, 0, ""
			}
		}
	}
	if key := keyOf(r); key != "" {
		if id, ok := c.keyIdentity(key); ok {
			id.addr = addr.String()
			return id, 0, ""
		}
		if !localClient(r) {
			return identity{}, http.StatusUnauthorized, "wrong API key: send your personal key, or the shared web.api_key, in the " + HeaderKey + " header"
		}
	}
	if localClient(r) {
		return identity{kind: selfNamed, addr: addr.String()}, 0, ""
	}
	if !c.cfg.Authenticates() {
		return identity{}, http.StatusForbidden, "only clients on this machine may use this opsbot: set web.api_key, web.users or web.trusted_proxies to let others in"
	}
	return identity{}, http.StatusUnauthorized, "missing API key: send your personal key (web.users) or the shared web.api_key in the " + HeaderKey + " header"
}

// keyOf is the key a request carries: the header, else the page's cookie.
func keyOf(r *http.Request) string {
	if k := r.Header.Get(HeaderKey); k != "" {
		return k
	}
	if ck, err := r.Cookie(KeyCookie); err == nil {
		k, _ := url.QueryUnescape(ck.Value) // the page encodes it
		return k
	}
	return ""
}

// keyIdentity finds whose key this is, comparing in constant time.
func (c *Connector) keyIdentity(key string) (identity, bool) {
	sum := sha256.Sum256([]byte(key))
	for _, u := range c.cfg.Users {
		want, _ := hex.DecodeString(u.KeySHA256) // checked by Validate
		if subtle.ConstantTimeCompare(sum[:], want) == 1 {
			return identity{kind: personalKey, name: u.Name}, true
		}
	}
	if c.cfg.APIKey != "" && subtle.ConstantTimeCompare([]byte(key), []byte(c.cfg.APIKey)) == 1 {
		return identity{kind: sharedKey, name: ScriptUser}, true
	}
	return identity{}, false
}

func (c *Connector) trustedProxy(addr netip.Addr) bool {
	for _, p := range c.proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// remoteAddr is the connection's address (not what headers claim).
func remoteAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, _ := netip.ParseAddr(host)
	return addr.Unmap()
}

// named is the identity with the name a request body gives, which only a
// self-named client may choose: a signed-in one may leave it out or repeat
// its own. It returns a message for the client when the name is refused:
// a chosen name must read as what it is (checkUser) and must not read as
// another spelling the chat knows (people).
func (c *Connector) named(id identity, given string) (identity, string) {
	if id.kind != selfNamed {
		if given != "" && given != id.name {
			return id, "user: you are signed in as " + id.name + "; leave user out or send that name"
		}
		return id, ""
	}
	if msg := checkUser(given); msg != "" {
		return id, msg
	}
	if held := c.people.claim(given); held != "" {
		return id, nameTaken(given, held)
	}
	id.name = given
	return id, ""
}

// user is the person the bot sees. When the chat also has signed-in
// people, a self-named one carries the mark in id and name, so that an
// approver rule naming alice is not met by a local "alice" and the cards
// say who was not checked; where everyone is self-named, every approval
// card says so instead (selfNamedNote).
func (c *Connector) user(id identity) connectors.User {
	if id.kind == selfNamed && c.cfg.Authenticates() {
		return connectors.User{ID: id.name + selfNamedMark, Name: id.name + selfNamedMark}
	}
	return connectors.User{ID: id.name, Name: id.name}
}

// selfNamedNote ends the context of an approval card on a chat where
// everyone names themselves.
const selfNamedNote = "names on this chat are self-chosen (local clients, no key), not checked"

// noteSelfNamed adds selfNamedNote to an approval card when nobody on the
// chat is signed in.
func (c *Connector) noteSelfNamed(b body) body {
	if c.cfg.Authenticates() || !b.hasAction(actionApprove) || strings.Contains(b.Context, selfNamedNote) {
		return b
	}
	if b.Context != "" {
		b.Context += " · "
	}
	b.Context += selfNamedNote
	return b
}

// client is the key request ids are kept under: the signed-in name, or a
// self-named client's address and name.
func (id identity) client() string {
	if id.kind == selfNamed {
		return id.kind.String() + "\x00" + id.addr + "\x00" + id.name
	}
	return id.kind.String() + "\x00" + id.name
}

// rateKey is the key the post rate is kept under: the signed-in name, or a
// self-named client's address (a new name each post is the same client).
func (id identity) rateKey() string {
	if id.kind == selfNamed {
		return id.kind.String() + "\x00" + id.addr
	}
	return id.client()
}

type identityKey struct{}

// identityOf is who the guard found r speaks for.
func identityOf(r *http.Request) identity {
	id, _ := r.Context().Value(identityKey{}).(identity)
	return id
}

func withIdentity(r *http.Request, id identity) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
}
