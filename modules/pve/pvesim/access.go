package pvesim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Ticket login (POST /access/ticket) and ticket authentication, after PVE::AccessControl: a
// ticket is "PVE:<user>:<hex time>::<signature>", valid for two hours, sent back as the
// PVEAuthCookie cookie; a write with a ticket also needs the CSRFPreventionToken header. The
// simulator knows one ticket user, the console user, who holds only VM.Console (docs/proxmox.md
// §14): with its ticket only the console calls are permitted.

// The console user of Options' zero value, and the ticket lifetime.
const (
	// DefaultConsoleUser is the console user's name.
	DefaultConsoleUser = "pvebill-console@pve"
	// DefaultConsolePassword is the console user's password.
	DefaultConsolePassword = "console-password-0000"
	// DefaultTicketLifetime is how long a ticket is valid (PVE::AccessControl's ticket_lifetime).
	DefaultTicketLifetime = 2 * time.Hour
	authCookie            = "PVEAuthCookie"
	csrfHeader            = "CSRFPreventionToken"
)

// consoleTemplates are the calls VM.Console permits a ticket user.
var consoleTemplates = map[string]bool{
	"POST /nodes/{node}/lxc/{vmid}/termproxy":    true,
	"POST /nodes/{node}/qemu/{vmid}/vncproxy":    true,
	"GET /nodes/{node}/lxc/{vmid}/vncwebsocket":  true,
	"GET /nodes/{node}/qemu/{vmid}/vncwebsocket": true,
}

// newTicketKey is the secret the simulator signs tickets with.
func newTicketKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
}

func (s *Sim) sign(parts ...string) string {
	m := hmac.New(sha256.New, s.ticketKey)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return base64.RawStdEncoding.EncodeToString(m.Sum(nil))
}

// issueTicket returns a login ticket and CSRF token for user, stamped with the sim clock.
func (s *Sim) issueTicket(user string) (ticket, csrf string) {
	ts := fmt.Sprintf("%08X", s.now().Unix())
	ticket = "PVE:" + user + ":" + ts + "::" + s.sign("PVE", user, ts)
	csrf = ts + ":" + s.sign("CSRF", user, ts)
	return ticket, csrf
}

// verifyTicket returns the user of a valid, unexpired ticket.
func (s *Sim) verifyTicket(ticket string) (string, bool) {
	rest, ok := strings.CutPrefix(ticket, "PVE:")
	if !ok {
		return "", false
	}
	body, sig, ok := strings.Cut(rest, "::")
	i := strings.LastIndex(body, ":")
	if !ok || i < 0 {
		return "", false
	}
	user, ts := body[:i], body[i+1:]
	if !hmac.Equal([]byte(sig), []byte(s.sign("PVE", user, ts))) || !s.fresh(ts) {
		return "", false
	}
	return user, true
}

// fresh reports whether a hex timestamp is within the ticket lifetime of the sim clock.
func (s *Sim) fresh(ts string) bool {
	sec, err := strconv.ParseInt(ts, 16, 64)
	if err != nil {
		return false
	}
	age := s.now().Sub(time.Unix(sec, 0))
	return age >= -5*time.Minute && age <= s.opts.TicketLifetime
}

func (s *Sim) verifyCSRF(user, token string) bool {
	ts, sig, ok := strings.Cut(token, ":")
	return ok && hmac.Equal([]byte(sig), []byte(s.sign("CSRF", user, ts))) && s.fresh(ts)
}

// authenticate checks a request's ticket cookie or API token (POST /access/ticket needs
// neither) and returns the user, or the refusal.
func (s *Sim) authenticate(c *reqCtx) (user string, a *apiAnswer) {
	if c.method == http.MethodPost && c.template == "/access/ticket" {
		return "", nil
	}
	ck, err := c.r.Cookie(authCookie)
	if err != nil { // a ticket cookie takes precedence over a token (docs/proxmox.md §1.1)
		if id, ok := s.checkAuth(c.r); ok {
			return id, nil
		}
		return "", messageAnswer(http.StatusUnauthorized, "authentication failure\n")
	}
	user, ok := s.verifyTicket(ck.Value)
	if !ok {
		return "", messageAnswer(http.StatusUnauthorized, "authentication failure\n")
	}
	if c.method != http.MethodGet && !s.verifyCSRF(user, c.r.Header.Get(csrfHeader)) {
		return "", messageAnswer(http.StatusUnauthorized, "Permission denied - invalid csrf token\n")
	}
	if !consoleTemplates[c.method+" "+c.template] {
		return "", &apiAnswer{status: http.StatusForbidden,
			body: errorBody(permDenied(c.path + ", Sys.Audit"))}
	}
	return user, nil
}

// hAccessTicket logs the console user in; the password may also be a valid ticket of the
// same user (a renewal), as in PVE::API2::AccessControl.
func (s *Sim) hAccessTicket(c *reqCtx) (any, error) {
	user := c.str("username")
	if realm := c.str("realm"); realm != "" && !strings.Contains(user, "@") {
		user += "@" + realm
	}
	pw := c.str("password")
	ok := user == s.opts.ConsoleUser &&
		subtle.ConstantTimeCompare([]byte(pw), []byte(s.opts.ConsolePassword)) == 1
	if !ok {
		if tu, valid := s.verifyTicket(pw); valid && tu == user && user == s.opts.ConsoleUser {
			ok = true
		}
	}
	if !ok {
		return nil, &apiError{status: http.StatusUnauthorized, msg: "authentication failure"}
	}
	ticket, csrf := s.issueTicket(user)
	return map[string]any{"username": user, "ticket": ticket, "CSRFPreventionToken": csrf,
		"clustername": "pvesim", "cap": map[string]any{"vms": map[string]int{"VM.Console": 1}}}, nil
}

// redactForm keeps passwords and console tickets out of the request log.
func redactForm(rel string, form url.Values) url.Values {
	if _, ok := form["password"]; ok && rel == "/access/ticket" {
		form.Set("password", "[redacted]")
	}
	if _, ok := form["vncticket"]; ok {
		form.Set("vncticket", "[redacted]")
	}
	return form
}
