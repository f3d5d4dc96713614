package agent

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// keyPrefix starts a public key in pvebill's cluster config: "ed25519:" and the raw 32-byte
// key in standard base64.
const keyPrefix = "ed25519:"

// ParsePublicKey reads "ed25519:<base64>".
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), keyPrefix)
	if !ok {
		return nil, errors.New(`must start with "ed25519:"`)
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("must be a 32-byte ed25519 key in standard base64 after \"ed25519:\"")
	}
	return ed25519.PublicKey(raw), nil
}

// FormatPublicKey renders a public key as "ed25519:<base64>".
func FormatPublicKey(k ed25519.PublicKey) string {
	return keyPrefix + base64.StdEncoding.EncodeToString(k)
}

// GenerateKeyFile writes a new private key (PKCS #8 PEM) to path, readable by its owner only,
// and returns the public half. An existing file is never overwritten.
func GenerateKeyFile(path string) (ed25519.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return pub, nil
}

// LoadPrivateKey reads a key written by GenerateKeyFile. A file that others may read is
// refused: the key is the agent's identity.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others (mode %04o): chmod 600 it", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s holds no PEM private key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s holds no ed25519 key", path)
	}
	return priv, nil
}
