package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"pvebill/server"
	"pvebill/server/config"
)

// cmdCall signs and sends one request with a client from the config file and prints the answer.
func cmdCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	clientID := fs.String("client", "", "client id (default: the first client in the config)")
	baseURL := fs.String("url", "", "server base URL (default: http://<listen>)")
	idemKey := fs.String("idempotency-key", "", "Idempotency-Key header")
	verbose := fs.Bool("verbose", false, "print the signed canonical string and the request headers on standard error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if *cfgPath == "" || len(rest) < 2 || len(rest) > 3 {
		fmt.Fprintln(stderr, "usage: pvebill call --config FILE [--client ID] [--verbose] METHOD PATH [BODY_FILE]")
		return 2
	}
	cfg, err := config.Load(*cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	var cl *config.Client
	for i := range cfg.Clients {
		if *clientID == "" || cfg.Clients[i].ID == *clientID {
			cl = &cfg.Clients[i]
			break
		}
	}
	if cl == nil {
		fmt.Fprintln(stderr, "pvebill call: no such client in the config")
		return 1
	}
	method, path := strings.ToUpper(rest[0]), rest[1]
	var body []byte
	if len(rest) == 3 {
		if body, err = os.ReadFile(rest[2]); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	base := *baseURL
	if base == "" {
		base = "http://" + cfg.Listen
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+path, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set(server.HeaderKey, cl.ID)
	req.Header.Set(server.HeaderTimestamp, ts)
	req.Header.Set(server.HeaderSignature, server.Sign([]byte(cl.Secret), ts, method, req.URL.RequestURI(), body))
	if *verbose {
		printSigned(stderr, req, ts, body)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if *idemKey != "" {
		req.Header.Set("Idempotency-Key", *idemKey)
	}
	resp, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "pvebill call:", err)
		return 1
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var pretty bytes.Buffer
	if json.Indent(&pretty, raw, "", "  ") == nil {
		raw = pretty.Bytes()
	}
	fmt.Fprintf(stderr, "HTTP %d\n", resp.StatusCode)
	fmt.Fprintln(stdout, string(raw))
	if resp.StatusCode >= 400 {
		return 1
	}
	return 0
}

// printSigned shows an integrator what was signed, to compare with their own signing: the
// canonical string's lines as signed, the body by its length and SHA-256 (a body may hold a
// root password), and the signature headers. The client's secret is never printed.
func printSigned(w io.Writer, req *http.Request, ts string, body []byte) {
	prefix := server.SigningPrefix(ts, req.Method, req.URL.RequestURI())
	sum := sha256.Sum256(body)
	fmt.Fprintln(w, "signed (HMAC-SHA256 with the client's secret over these lines, then the raw body byte for byte):")
	for _, line := range strings.SplitAfter(prefix, "\n") {
		if line != "" {
			fmt.Fprintf(w, "  %q\n", line)
		}
	}
	fmt.Fprintf(w, "  body: %d bytes, sha256 %s\n", len(body), hex.EncodeToString(sum[:]))
	for _, h := range []string{server.HeaderKey, server.HeaderTimestamp, server.HeaderSignature} {
		fmt.Fprintf(w, "%s: %s\n", h, req.Header.Get(h))
	}
}
