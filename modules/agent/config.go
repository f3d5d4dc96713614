package agent

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"pvebill/modules/pve"
)

// Config is the agent's file, agent.yaml. The Proxmox credentials live here, next to Proxmox,
// and nowhere in pvebill.
type Config struct {
	// Server is pvebill's base URL: https, or http on a loopback address.
	Server string `yaml:"server"`
	// ServerFingerprint pins the SHA-256 fingerprint of pvebill's certificate (AA:BB:..:FF);
	// empty: the system roots verify it.
	ServerFingerprint string `yaml:"server_fingerprint,omitempty"`
	// Cluster is the cluster's name in pvebill's configuration.
	Cluster string `yaml:"cluster"`
	// PrivateKeyFile is the key `pvebill agent keygen` wrote (relative to the config file).
	PrivateKeyFile string  `yaml:"private_key_file"`
	Proxmox        Proxmox `yaml:"proxmox"`
	// Tunnels is how many tunnels the agent keeps, each to a different pvebill replica, as many
	// as there are live replicas (default DefaultTunnels, at most MaxTunnels).
	Tunnels int `yaml:"tunnels,omitempty"`
	// LogFormat (json, text) and LogLevel, as pvebill's own.
	LogFormat string `yaml:"log_format,omitempty"`
	LogLevel  string `yaml:"log_level,omitempty"`
}

// Proxmox is the cluster's API endpoint and credentials.
type Proxmox struct {
	URL                string `yaml:"url"`
	TokenID            string `yaml:"token_id"`
	TokenSecret        string `yaml:"token_secret"`
	Fingerprint        string `yaml:"fingerprint,omitempty"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify,omitempty"`
	ConsoleUser        string `yaml:"console_user,omitempty"`
	ConsolePassword    string `yaml:"console_password,omitempty"`
}

// PVE is the Proxmox client's configuration.
func (c Config) PVE() pve.Config {
	p := c.Proxmox
	return pve.Config{Cluster: c.Cluster, URL: p.URL, TokenID: p.TokenID, TokenSecret: p.TokenSecret,
		Fingerprint: p.Fingerprint, InsecureSkipVerify: p.InsecureSkipVerify, ConsoleUser: p.ConsoleUser,
		ConsolePassword: p.ConsolePassword}
}

// LoadConfig reads agent.yaml (unknown keys are errors) and validates it; the private key
// file's path is made absolute relative to the file.
func LoadConfig(path string) (Config, error) {
	var cfg Config
	raw, err := os.ReadFile(path)
	if err != nil {
		return cfg, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	if cfg.PrivateKeyFile != "" && !filepath.IsAbs(cfg.PrivateKeyFile) {
		cfg.PrivateKeyFile = filepath.Join(filepath.Dir(path), cfg.PrivateKeyFile)
	}
	return cfg, cfg.Validate()
}

// Validate checks every key; the Proxmox section as pvebill's own client checks it. No error
// carries a secret.
func (c Config) Validate() error {
	if _, err := c.serverURL(); err != nil {
		return err
	}
	if c.Cluster == "" {
		return errors.New("agent config: cluster: must name the cluster as pvebill's config does")
	}
	if c.PrivateKeyFile == "" {
		return errors.New("agent config: private_key_file: required (pvebill agent keygen --out FILE)")
	}
	if c.Tunnels < 0 || c.Tunnels > MaxTunnels {
		return fmt.Errorf("agent config: tunnels: must be 1 to %d (0: %d)", MaxTunnels, DefaultTunnels)
	}
	if c.ServerFingerprint != "" {
		if _, err := parsePin(c.ServerFingerprint); err != nil {
			return err
		}
	}
	if _, err := pve.New(c.PVE(), nil); err != nil {
		return fmt.Errorf("agent config: proxmox: %w", err)
	}
	return nil
}

// DefaultTunnels and MaxTunnels bound Config.Tunnels.
const (
	DefaultTunnels = 2
	MaxTunnels     = 8
)

// tunnels is the configured count, or the default.
func (c Config) tunnels() int {
	if c.Tunnels == 0 {
		return DefaultTunnels
	}
	return c.Tunnels
}

// serverURL checks server: https, or http to a loopback host (tests, a local proxy).
func (c Config) serverURL() (*url.URL, error) {
	u, err := url.Parse(c.Server)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("agent config: server: %q is not pvebill's base URL", c.Server)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if ip := net.ParseIP(u.Hostname()); (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
			return nil, errors.New("agent config: server: http only to a loopback address; use https")
		}
	default:
		return nil, fmt.Errorf("agent config: server: scheme %q: use https", u.Scheme)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("agent config: server: no credentials, query or fragment")
	}
	return u, nil
}

// parsePin reads an AA:BB:..:FF SHA-256 fingerprint.
func parsePin(s string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	raw, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	if err != nil || len(raw) != sha256.Size {
		return d, errors.New("agent config: server_fingerprint: must be a SHA-256 fingerprint, AA:BB:..:FF")
	}
	copy(d[:], raw)
	return d, nil
}

// serverTLS verifies pvebill's certificate: by the system roots, or by the pinned fingerprint
// of its leaf certificate.
func (c Config) serverTLS() *tls.Config {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.ServerFingerprint == "" {
		return tc
	}
	pin, _ := parsePin(c.ServerFingerprint)
	tc.InsecureSkipVerify = true // replaced by the pin below
	tc.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 || sha256.Sum256(cs.PeerCertificates[0].Raw) != pin {
			return errors.New("pvebill's certificate does not match server_fingerprint")
		}
		return nil
	}
	return tc
}
