package lxc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
)

// R41: Through the kind: a stamped running container's terminal opens past termproxy's handshake,
// "hostname" typed in termproxy's framing is answered with the container's hostname, and the
// console capability is listed. A container of another service is refused before any console
// call reaches Proxmox (R39).
func TestOpenConsoleTerminal(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret})
	if err := sim.SeedGuest(pvesim.Guest{VMID: 210, Type: "lxc", Node: "pve1", Running: true, Config: map[string]string{
		"hostname": "shop-ct", "ostype": "debian", "rootfs": "local-lvm:vm-210-disk-0,size=8G",
		"description": kinds.StampDescription(kinds.Guest{ClientID: "whmcs", ServiceID: "svc-1"}), "tags": kinds.StampTag}}); err != nil {
		t.Fatal(err)
	}
	srv := simtest.Start(t, sim)
	client, err := pve.New(pve.Config{Cluster: "default", URL: srv.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		ConsoleUser: simtest.ConsoleUser, ConsolePassword: simtest.ConsolePassword, Timeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	m := lxc.New()
	other := kinds.Guest{Client: client, Cluster: "default", Node: "pve1", VMID: 210, ClientID: "whmcs", ServiceID: "svc-2"}
	if _, err := m.OpenConsole(ctx, other); !errors.Is(err, kinds.ErrNotOurs) {
		t.Fatalf("another service's container: %v", err)
	}
	for _, r := range sim.Requests() {
		if r.Method == "POST" {
			t.Fatalf("a refused console sent %s %s", r.Method, r.Path)
		}
	}
	con, err := m.OpenConsole(ctx, kinds.Guest{Client: client, Cluster: "default", Node: "pve1", VMID: 210, ClientID: "whmcs", ServiceID: "svc-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	if con.Protocol != kinds.ConsoleTerminal || con.GreetBrowser(nil) != nil {
		t.Fatalf("protocol %q", con.Protocol)
	}
	in := bufio.NewReader(con.Upstream)
	readExactly(t, in, "root@shop-ct:~# ")
	if _, err := io.WriteString(con.Upstream, "0:9:hostname\r"); err != nil {
		t.Fatal(err)
	}
	readExactly(t, in, "hostname\r\nshop-ct\r\nroot@shop-ct:~# ")
	if !slices.Contains(kinds.Capabilities(m), plans.CapConsole) {
		t.Fatalf("capabilities %v lack console", kinds.Capabilities(m))
	}
}

func readExactly(t *testing.T, in *bufio.Reader, want string) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(in, got); err != nil || string(got) != want {
		t.Fatalf("read %q (%v), want %q", got, err, want)
	}
}
