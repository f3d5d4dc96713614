package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for name (not for the loopback address the probe
// dials) and its key into dir, and returns both paths.
func selfSigned(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// A server that serves TLS itself is probed over HTTPS and must present the certificate of its
// own tls.cert_file (pinned: the certificate names pvebill.example, the probe dials loopback).
// A probe that expects another certificate fails, and so does a plain-HTTP one (400).
func TestHealthcheckUnderTLS(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cert, key := selfSigned(t, dir, "pvebill.example")
	other, _ := selfSigned(t, dir, "other.example")
	t.Setenv("PVEBILL_LISTEN", "127.0.0.1:0")
	t.Setenv("PVEBILL_TLS_CERT_FILE", cert)
	t.Setenv("PVEBILL_TLS_KEY_FILE", key)
	out, _, _, _ := startCmd(t, "serve")
	addr := waitFor(t, out, regexp.MustCompile(`API +https://(\S+)`), 15*time.Second)[1]
	t.Setenv("PVEBILL_LISTEN", addr)
	if code, msg := healthcheck(t); code != 0 || !regexp.MustCompile(`^ok https://`).MatchString(msg) {
		t.Fatalf("healthcheck of a TLS server: exit %d: %s", code, msg)
	}
	cfgPath := filepath.Join(dir, "pvebill.yaml")
	cfg := "listen: \"" + addr + "\"\ndatabase:\n  driver: sqlite\n  dsn: \"" + filepath.Join(dir, "p.db") + "\"\n" +
		"tls:\n  cert_file: \"" + cert + "\"\n  key_file: \"" + key + "\"\n" +
		"clients:\n  - id: whmcs\n    secret: \"a-long-enough-secret-0123456789abcdef\"\n    scopes: [billing]\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, msg := healthcheck(t, "--config", cfgPath); code != 0 {
		t.Fatalf("healthcheck with the server's config: exit %d: %s", code, msg)
	}
	t.Setenv("PVEBILL_TLS_CERT_FILE", other)
	if code, msg := healthcheck(t, "--timeout", "2s"); code != 1 || !regexp.MustCompile(`not the one in tls.cert_file`).MatchString(msg) {
		t.Fatalf("healthcheck expecting another certificate: exit %d, want 1: %s", code, msg)
	}
	t.Setenv("PVEBILL_TLS_CERT_FILE", "")
	if code, msg := healthcheck(t, "--timeout", "2s"); code != 1 || !regexp.MustCompile(`400`).MatchString(msg) {
		t.Fatalf("plain-HTTP healthcheck of a TLS server: exit %d, want 1 with 400: %s", code, msg)
	}
	t.Setenv("PVEBILL_TLS_CERT_FILE", filepath.Join(dir, "missing.crt"))
	if code, _ := healthcheck(t, "--timeout", "2s"); code != 1 {
		t.Fatalf("a missing certificate file: exit %d, want 1", code)
	}
}
