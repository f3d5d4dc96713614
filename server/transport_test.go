package server_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pvebill/server/config"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key, and returns their
// paths and the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pvebill test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// With tls.cert_file and tls.key_file the server answers HTTPS itself: a signed call over TLS
// is served, and plain HTTP on the same port is not.
func TestServeTLS(t *testing.T) {
	certFile, keyFile, cert := selfSigned(t)
	h := newHarnessWith(t, "sqlite", func(o *harnessOpts) { o.tls = config.TLS{CertFile: certFile, KeyFile: keyFile} })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ln) }()
	t.Cleanup(func() {
		// Not t.Context(): it is cancelled before cleanups run, and Shutdown would give up on
		// a connection that is still closing.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	base := "https://" + ln.Addr().String()
	body := job("svc-tls", "")
	req, err := http.NewRequest("POST", base+"/v1/_test/jobs", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sign(req, "whmcs", billingSecret, h.clock(), body)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 202 || resp.TLS == nil {
		t.Fatalf("signed call over TLS: %d, tls %v", resp.StatusCode, resp.TLS != nil)
	}
	plain, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err == nil {
		if cerr := plain.Body.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if plain.StatusCode == 200 {
			t.Fatal("plain HTTP answered on the TLS port")
		}
	}
}

// A cluster reached over plain http or without certificate verification is logged at WARN and
// reported in readiness, which stays ready.
func TestInsecureTransportWarned(t *testing.T) {
	h := newHarnessWith(t, "sqlite", func(o *harnessOpts) {
		o.clusters = []config.Cluster{{Name: "lab", URL: "http://pve.lab:8006", TokenID: "pvebill@pve!t", TokenSecret: "x"},
			{Name: "edge", URL: "https://pve.edge:8006", TokenID: "pvebill@pve!t", TokenSecret: "x", InsecureSkipVerify: true}}
	})
	r := h.do(mustRequest(t, "GET", h.http.URL+"/readyz"))
	if r.Status != 200 {
		t.Fatalf("readyz: %d %s", r.Status, r.Body)
	}
	for _, key := range []string{"clusters[0].url", "clusters[1].insecure_skip_verify"} {
		if !strings.Contains(string(r.Body), key) {
			t.Errorf("readiness does not report %s: %s", key, r.Body)
		}
		if !strings.Contains(h.logs.String(), `"level":"WARN","msg":"insecure transport setting","key":"`+key) {
			t.Errorf("no WARN log for %s", key)
		}
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
