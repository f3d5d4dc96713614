package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"pvebill/server/config"
)

// healthcheckTimeout bounds the whole probe: a container engine runs it every few seconds.
const healthcheckTimeout = 3 * time.Second

// cmdHealthcheck probes a running server: GET /healthz on the configured listen address (a
// wildcard host is probed on loopback). Exit 0 when it answers 200, 1 otherwise; made for a
// container HEALTHCHECK, where the image has no shell and no curl.
func cmdHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file whose listen address is probed (omit for the default "+config.Defaults().Listen+")")
	timeout := fs.Duration("timeout", healthcheckTimeout, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	listen := config.Defaults().Listen
	if *cfgPath != "" {
		cfg, err := config.Load(*cfgPath, os.Environ())
		if err != nil {
			_, _ = fmt.Fprintln(stderr, "pvebill healthcheck:", err)
			return 1
		}
		listen = cfg.Listen
	} else if v := os.Getenv("PVEBILL_LISTEN"); v != "" {
		listen = v
	}
	url, err := healthURL(listen)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill healthcheck:", err)
		return 1
	}
	if err := probe(ctx, url, *timeout); err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill healthcheck:", err)
		return 1
	}
	_, _ = fmt.Fprintln(stdout, "ok", url)
	return 0
}

// healthURL is the /healthz URL of a listen address; a wildcard or empty host becomes loopback.
func healthURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// probe GETs url and wants a 200 within timeout.
func probe(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)); err != nil {
		return fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
