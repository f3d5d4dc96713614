package qemu_test

import (
	"context"
	"encoding/binary"
	"errors"
	"image/color"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/qemu"
)

// R41: Through the kind and a relay as the console page's will be: a stamped running VM's screen
// opens past the VNC authentication with the vncticket; the browser side is greeted with the
// security type None (so the page never holds the ticket), sends ClientInit, asks for the whole
// framebuffer and gets the simulated screen: the background colour, with the VM's name drawn.
func TestOpenConsoleVNC(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret})
	if err := sim.SeedGuest(pvesim.Guest{VMID: 310, Type: "qemu", Node: "pve1", Running: true, Config: map[string]string{
		"name": "shop-vm", "memory": "2048", "cores": "2", "scsi0": "local-lvm:vm-310-disk-0,size=16G", "boot": "order=scsi0",
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
	m := qemu.New()
	if _, err := m.OpenConsole(ctx, kinds.Guest{Client: client, Node: "pve1", VMID: 300, ClientID: "whmcs", ServiceID: "svc-1"}); !errors.Is(err, kinds.ErrNotOurs) {
		t.Fatalf("unstamped VM: %v", err)
	}
	con, err := m.OpenConsole(ctx, kinds.Guest{Client: client, Cluster: "default", Node: "pve1", VMID: 310, ClientID: "whmcs", ServiceID: "svc-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	if con.Protocol != kinds.ConsoleVNC || !slices.Contains(kinds.Capabilities(m), plans.CapConsole) {
		t.Fatalf("protocol %q, capabilities %v", con.Protocol, kinds.Capabilities(m))
	}
	browser, relay := net.Pipe()
	defer browser.Close()
	go func() {
		defer relay.Close()
		if con.GreetBrowser(relay) != nil {
			return
		}
		go func() { _, _ = io.Copy(con.Upstream, relay) }()
		_, _ = io.Copy(relay, con.Upstream)
	}()
	_ = browser.SetDeadline(time.Now().Add(10 * time.Second))
	name := rfbNoneClient(t, browser)
	if name != "shop-vm" {
		t.Fatalf("desktop name %q", name)
	}
	bg, fg := countPixels(t, browser)
	if bg < pvesim.ConsoleWidth*pvesim.ConsoleHeight/2 || fg < 500 || bg+fg != pvesim.ConsoleWidth*pvesim.ConsoleHeight {
		t.Fatalf("%d background and %d foreground pixels", bg, fg)
	}
}

// rfbNoneClient is noVNC's side of the handshake through the relay: version, security type
// None, ClientInit; it returns the desktop name of ServerInit.
func rfbNoneClient(t *testing.T, c net.Conn) string {
	t.Helper()
	b := make([]byte, 12)
	must(t, read(c, b))
	if string(b) != "RFB 003.008\n" {
		t.Fatalf("version %q", b)
	}
	must(t, write(c, []byte("RFB 003.008\n")))
	types := make([]byte, 2)
	must(t, read(c, types))
	if types[0] != 1 || types[1] != 1 {
		t.Fatalf("security types %v, want only None", types)
	}
	must(t, write(c, []byte{1}))
	res := make([]byte, 4)
	must(t, read(c, res))
	if binary.BigEndian.Uint32(res) != 0 {
		t.Fatalf("security result %v", res)
	}
	must(t, write(c, []byte{1})) // ClientInit, shared
	init := make([]byte, 24)
	must(t, read(c, init))
	if w, h := binary.BigEndian.Uint16(init), binary.BigEndian.Uint16(init[2:]); w != pvesim.ConsoleWidth || h != pvesim.ConsoleHeight {
		t.Fatalf("size %dx%d", w, h)
	}
	name := make([]byte, binary.BigEndian.Uint32(init[20:]))
	must(t, read(c, name))
	return string(name)
}

// countPixels sets noVNC's pixel format (32 bpp, little-endian, red at bit 0), asks for the
// whole screen and counts background and foreground pixels of the answer.
func countPixels(t *testing.T, c net.Conn) (bg, fg int) {
	t.Helper()
	pf := []byte{0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0}
	upd := []byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(upd[6:], pvesim.ConsoleWidth)
	binary.BigEndian.PutUint16(upd[8:], pvesim.ConsoleHeight)
	must(t, write(c, append(pf, upd...)))
	hdr := make([]byte, 16)
	must(t, read(c, hdr))
	if hdr[0] != 0 || binary.BigEndian.Uint16(hdr[2:]) != 1 || binary.BigEndian.Uint32(hdr[12:]) != 0 {
		t.Fatalf("update header %v", hdr)
	}
	pix := make([]byte, 4*pvesim.ConsoleWidth*pvesim.ConsoleHeight)
	must(t, read(c, pix))
	at := func(i int) color.RGBA { return color.RGBA{R: pix[i], G: pix[i+1], B: pix[i+2], A: 0xff} }
	if at(0) != pvesim.ConsoleBackground {
		t.Fatalf("corner pixel %v, want %v", at(0), pvesim.ConsoleBackground)
	}
	for i := 0; i < len(pix); i += 4 {
		switch at(i) {
		case pvesim.ConsoleBackground:
			bg++
		case pvesim.ConsoleForeground:
			fg++
		}
	}
	return bg, fg
}

func read(c net.Conn, b []byte) error { _, err := io.ReadFull(c, b); return err }

func write(c net.Conn, b []byte) error { _, err := c.Write(b); return err }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
