package alerts

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// bearerOK says whether the request carries the source's token. The
// comparison takes the same time whatever the token sent: both sides are
// hashed first, so neither its bytes nor its length leak.
func bearerOK(token string, h http.Header) bool {
	got, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// signatureOK says whether X-PagerDuty-Signature holds a v1= signature,
// HMAC-SHA256 of the raw body, made with one of the secrets: PagerDuty
// sends one per secret it signs with, and the config may hold the old and
// the new secret while one is rotated out.
func signatureOK(secrets []string, body []byte, h http.Header) bool {
	ok := false
	for _, sig := range strings.Split(h.Get("X-PagerDuty-Signature"), ",") {
		hexSig, isV1 := strings.CutPrefix(strings.TrimSpace(sig), "v1=")
		got, err := hex.DecodeString(hexSig)
		if !isV1 || err != nil {
			continue
		}
		for _, s := range secrets {
			if s == "" {
				continue
			}
			mac := hmac.New(sha256.New, []byte(s))
			mac.Write(body)
			// Every pair is compared: the time taken does not say which
			// secret matched, or how far a guess got.
			ok = hmac.Equal(got, mac.Sum(nil)) || ok
		}
	}
	return ok
}

// Sign is the X-PagerDuty-Signature PagerDuty would send for body with
// secret (for `opsbot alerts test`, and tests).
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}
