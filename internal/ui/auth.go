package ui

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// tokenParam is the query parameter of the URL the server prints.
const tokenParam = "token"

// authenticate lets a request through when it carries the token: in the URL (the first visit, which
// is then redirected to the same URL without it, the token kept in a cookie), in the cookie, or as a
// bearer token (for scripts). Any other request is refused with 401.
func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	cookie := s.cookieName()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := r.URL.Query().Get(tokenParam); t != "" {
			if !s.validToken(t) {
				refuse(w)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: cookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			q := u.Query()
			q.Del(tokenParam)
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(cookie); err == nil && s.validToken(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.validToken(t) {
			next.ServeHTTP(w, r)
			return
		}
		refuse(w)
	})
}

func (s *Server) validToken(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.opts.Token)) == 1
}

// cookieName depends on the token, so that two views on one host (cookies ignore ports) keep their own.
func (s *Server) cookieName() string {
	sum := sha256.Sum256([]byte(s.opts.Token))
	return "capstan-ui-" + hex.EncodeToString(sum[:4])
}

func refuse(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("401 Unauthorized: this web view needs its token. Open the URL with ?token=... that `capstan ui` " +
		"(or `capstan up --ui`) printed.\n"))
}
