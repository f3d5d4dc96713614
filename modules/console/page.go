package console

import (
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"pvebill/i18n"
)

// The page's own scripts and styles (assets/app) and the client libraries fetched by
// scripts/console-assets/fetch.sh (assets/vendor, checked against assets/vendor/SHA256SUMS by
// TestVendoredAssetsMatchTheLock): all served from the binary, nothing from another host.
//
//go:embed assets templates
var files embed.FS

var pages = template.Must(template.ParseFS(files, "templates/*.html"))

// contentSecurityPolicy lets the console page load and connect to its own origin only. xterm.js
// writes its themes into <style> elements at run time, hence the inline styles (scripts are
// never inline).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// pageHeaders are the headers of the console pages: the URL carries a one-time token, so it is
// neither cached nor sent on as a referrer, and the page is never framed.
func pageHeaders(w http.ResponseWriter, lang string) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Language", lang)
	h.Set("Content-Type", "text/html; charset=utf-8")
}

// ServePage is GET /console/{token}: the console page of a token that may still be opened, or
// the 410 page of one that is malformed, expired or used. Loading the page does not use the
// token: only its WebSocket does.
func (s *Service) ServePage(w http.ResponseWriter, r *http.Request, token string) {
	reason := ""
	g, err := s.tokens.Parse(token)
	switch {
	case s.o.Secret == "" || err != nil:
		reason = reasonInvalid
	case !s.o.Now().Before(g.Expires):
		reason = reasonExpired
	default:
		used, err := s.o.DB.ConsoleClaimed(r.Context(), g.Nonce[:])
		if err != nil {
			s.o.Log.Error("console: read claim", "err", err)
			reason = reasonInternal
		} else if used {
			reason = reasonUsed
		}
	}
	if reason != "" {
		s.writeRefusal(w, r, reason)
		return
	}
	lang := i18n.Negotiate(r.Header.Get("Accept-Language"))
	t := func(key string) string { return i18n.T(lang, "console."+key, nil) }
	pageHeaders(w, lang)
	w.WriteHeader(http.StatusOK)
	_ = pages.ExecuteTemplate(w, "page.html", map[string]string{"Lang": lang, "Kind": string(g.Kind),
		"Title": t("title"), "Connecting": t("connecting"), "Connected": t("connected"), "Closed": t("closed"),
		"MaxSession": t("max_session"), "ServiceChanged": t("service_changed"), "Failed": t("failed")})
}

// writeRefusal answers a token that cannot be used: 410 with a short page in the visitor's
// language (Accept-Language), or 502 when Proxmox did not open the console, or 500.
func (s *Service) writeRefusal(w http.ResponseWriter, r *http.Request, reason string) {
	lang := i18n.Negotiate(r.Header.Get("Accept-Language"))
	status, text := http.StatusGone, "console.gone_text"
	switch reason {
	case reasonOrigin:
		status, text = http.StatusForbidden, "console.unavailable_text"
	case reasonLimit:
		status, text = http.StatusTooManyRequests, "console.session_limit_text"
	case reasonUpstream:
		status, text = http.StatusBadGateway, "console.failed"
	case reasonInternal:
		status, text = http.StatusInternalServerError, "console.failed"
	case reasonForeign, reasonSuspended, reasonNoGuest, reasonNotReady, reasonKind:
		text = "console.unavailable_text"
	}
	if wantsJSON(r) {
		writeProblem(w, lang, status, reason)
		return
	}
	pageHeaders(w, lang)
	w.WriteHeader(status)
	_ = pages.ExecuteTemplate(w, "gone.html", map[string]string{"Lang": lang,
		"Title": i18n.T(lang, "console.gone_title", nil), "Text": i18n.T(lang, text, nil)})
}

// wantsJSON reports whether the request asks for JSON (a program, not a browser page).
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "json")
}

// writeProblem is a refusal as problem+json: console_expired for a token that cannot be used,
// forbidden for another site's page, console_session_limit (temporary) beyond the open sessions
// allowed, proxmox_unavailable when Proxmox did not open the console, internal_error.
func writeProblem(w http.ResponseWriter, lang string, status int, reason string) {
	p := i18n.NewProblem(status, i18n.CodeConsoleExpired)
	switch status {
	case http.StatusForbidden:
		p = i18n.NewProblem(status, i18n.CodeForbidden)
	case http.StatusTooManyRequests:
		p = sessionLimit()
	case http.StatusBadGateway:
		p = i18n.NewProblem(status, i18n.CodeProxmoxUnavailable)
	case http.StatusInternalServerError:
		p = i18n.NewProblem(status, i18n.CodeInternal)
	}
	doc := map[string]any{"type": "https://pvebill.dev/problems/" + string(p.Code),
		"title": http.StatusText(status), "status": status, "code": p.Code, "detail": p.Detail(lang), "reason": reason}
	if p.Permanence != "" {
		doc["permanence"] = p.Permanence
	}
	body, _ := json.Marshal(doc)
	w.Header().Set("Content-Language", lang)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Assets serves the page's embedded files under prefix (/console/assets/): long-cached, since
// a new binary is the only way they change.
func Assets(prefix string) http.Handler {
	sub, _ := fs.Sub(files, "assets")
	fsrv := http.StripPrefix(prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || strings.HasSuffix(r.URL.Path, "SHA256SUMS") {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		switch path.Ext(r.URL.Path) {
		case ".js", ".mjs":
			h.Set("Content-Type", "text/javascript; charset=utf-8")
		case ".css":
			h.Set("Content-Type", "text/css; charset=utf-8")
		}
		h.Set("Cache-Control", "public, max-age=86400")
		h.Set("X-Content-Type-Options", "nosniff")
		fsrv.ServeHTTP(w, r)
	})
}

// originAllowed reports whether the page that opens a console WebSocket may: the request's
// Origin is this host, or console.public_url's (originPatterns), as the WebSocket library
// checks it on accept; it is checked first, so that another site's page neither uses the token
// nor opens anything at Proxmox. A request without an Origin is no browser's page.
func (s *Service) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, host := range originPatterns(s.o.PublicURL) {
		if strings.EqualFold(u.Host, host) {
			return true
		}
	}
	return false
}

// originPatterns are the origins whose pages may open a console WebSocket: publicURL's
// host (the page is served from there), or, without one, the request's own host only.
func originPatterns(publicURL string) []string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" {
		return nil
	}
	return []string{u.Host}
}
