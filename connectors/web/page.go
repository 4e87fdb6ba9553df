package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// ui is the chat page: plain HTML, CSS and JavaScript, no build step and
// nothing fetched from elsewhere, so it works offline.
//
//go:embed ui
var ui embed.FS

// contentPolicy lets the page run only its own files: even a rendering
// bug cannot run a script or load an image a message smuggled in.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

func pageHandler() http.Handler {
	return secureHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, ui, "ui/index.html")
	}))
}

func assetHandler() http.Handler {
	sub, _ := fs.Sub(ui, "ui") // "ui" is embedded: cannot fail
	return secureHeaders(http.StripPrefix("/assets/", http.FileServerFS(sub)))
}
