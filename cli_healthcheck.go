package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
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
// wildcard host is probed on loopback), over HTTPS when the config serves TLS (tls.cert_file),
// where the server must present exactly that certificate. Exit 0 when it answers 200, 1
// otherwise; made for a container HEALTHCHECK, where the image has no shell and no curl.
func cmdHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file whose listen address is probed (omit for the default "+config.Defaults().Listen+")")
	timeout := fs.Duration("timeout", healthcheckTimeout, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	listen, certFile := config.Defaults().Listen, os.Getenv("PVEBILL_TLS_CERT_FILE")
	if *cfgPath != "" {
		cfg, err := config.Load(*cfgPath, os.Environ())
		if err != nil {
			_, _ = fmt.Fprintln(stderr, "pvebill healthcheck:", err)
			return 1
		}
		listen, certFile = cfg.Listen, cfg.TLS.CertFile
	} else if v := os.Getenv("PVEBILL_LISTEN"); v != "" {
		listen = v
	}
	url, client, err := healthTarget(listen, certFile)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill healthcheck:", err)
		return 1
	}
	if err := probe(ctx, client, url, *timeout); err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill healthcheck:", err)
		return 1
	}
	_, _ = fmt.Fprintln(stdout, "ok", url)
	return 0
}

// healthTarget is the /healthz URL of a listen address and the HTTP client that probes it: plain
// HTTP without a certificate file, else HTTPS pinned to the certificate the server serves.
func healthTarget(listen, certFile string) (string, *http.Client, error) {
	url, err := healthURL(listen)
	if err != nil || certFile == "" {
		return url, http.DefaultClient, err
	}
	leaf, err := servedCertificate(certFile)
	if err != nil {
		return "", nil, err
	}
	return "https" + url[len("http"):], &http.Client{Transport: &http.Transport{TLSClientConfig: pinnedTo(leaf)}}, nil
}

// servedCertificate is the DER of the first certificate in a PEM file: the leaf the server
// presents from tls.cert_file.
func servedCertificate(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file: %w", err)
	}
	for rest := raw; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return nil, fmt.Errorf("tls.cert_file %s holds no certificate", path)
		}
		if block.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(block.Bytes); err != nil {
				return nil, fmt.Errorf("tls.cert_file %s: %w", path, err)
			}
			return block.Bytes, nil
		}
	}
}

// pinnedTo accepts exactly the server's own certificate, whatever names it carries: the probe
// dials loopback, which a certificate for the public name does not cover, and a certificate
// anyone else holds must not pass.
func pinnedTo(leaf []byte) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // verified below: the peer must present exactly leaf
		VerifyPeerCertificate: func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
			if len(rawCerts) == 0 || !bytes.Equal(rawCerts[0], leaf) {
				return errors.New("the server's certificate is not the one in tls.cert_file")
			}
			return nil
		},
	}
}

// scheme is the URL scheme the server answers with its TLS settings.
func scheme(t config.TLS) string {
	if t.CertFile != "" {
		return "https"
	}
	return "http"
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

// probe GETs url with client and wants a 200 within timeout.
func probe(ctx context.Context, client *http.Client, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
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
