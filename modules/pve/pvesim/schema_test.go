package pvesim

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSchemaRefusals(t *testing.T) {
	h := demoHarness(t)
	cases := []struct {
		name, method, path string
		form               url.Values
		status             int
		param, errPart     string
	}{
		{"unknown param", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "bogus", "1"), 400,
			"bogus", "property is not defined in schema and the schema does not allow additional properties"},
		{"missing required", "POST", "/nodes/pve1/lxc", vals("vmid", "5001"), 400, "ostemplate", "property is missing and it is not optional"},
		{"integer type", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "memory", "1G"), 400,
			"memory", "type check ('integer') failed - got '1G'"},
		{"boolean true is not 1", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "unprivileged", "true"), 400,
			"unprivileged", "type check ('boolean') failed - got 'true'"},
		{"number", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "cpulimit", "x"), 400,
			"cpulimit", "type check ('number') failed - got 'x'"},
		{"enum", "GET", "/cluster/resources", vals("type", "lxc"), 400,
			"type", "value 'lxc' does not have a value in the enumeration 'vm, storage, node, sdn'"},
		{"minimum", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "memory", "8"), 400,
			"memory", "value must have a minimum value of 16"},
		{"vmid format before range", "GET", "/cluster/nextid", vals("vmid", "99"), 400, "vmid", "invalid format - value does not look like a valid VM ID\n"},
		{"maximum", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "tty", "7"), 400, "tty", "value must have a maximum value of 6"},
		{"vmid path type", "GET", "/nodes/pve1/lxc/abc/config", nil, 400, "vmid", "type check ('integer') failed - got 'abc'"},
		{"maxLength", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "hostname", strings.Repeat("a", 256)), 400,
			"hostname", "value may only be 255 characters long"},
		{"dns-name format", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "hostname", "bad_name"), 400,
			"hostname", "invalid format - value does not look like a valid DNS name"},
		{"node format", "GET", "/nodes/bad_node/status", nil, 400, "node", "value does not look like a valid node name"},
		{"indexed key out of range", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "mp256", "local-lvm:1,mp=/x"), 400,
			"mp256", "property is not defined in schema"},
		{"net index out of range", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "net32", "name=eth0"), 400,
			"net32", "property is not defined in schema"},
		{"property string unknown key", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "net0", "name=eth0,colour=blue"), 400,
			"net0", "invalid format - invalid key in comma-separated list property: colour"},
		{"property string missing key", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "net0", "bridge=vmbr0"), 400,
			"net0", "net0.name: property is missing and it is not optional"},
		{"property string pattern", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "net0", "name=eth0,hwaddr=zz"), 400,
			"net0", "invalid format"},
		{"urlencoded sshkeys", "PUT", "/nodes/pve1/qemu/300/config", vals("sshkeys", "ssh-ed25519 AAAA x@y"), 400,
			"sshkeys", "invalid format - invalid urlencoded string"},
		{"ipconfig gateway with dhcp", "PUT", "/nodes/pve1/qemu/300/config", vals("ipconfig0", "ip=dhcp,gw=192.0.2.1"), 400,
			"ipconfig0", "gateway specified together with DHCP"},
		// R54: ip6/gw6 as Proxmox checks them, in a container's net key and a VM's ipconfig0.
		{"container ip6 without prefix length", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl,
			"net0", "name=eth0,bridge=vmbr0,ip6=2001:db8::1"), 400, "net0", "ip6"},
		{"container gw6 not an address", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl,
			"net0", "name=eth0,bridge=vmbr0,ip6=2001:db8::1/64,gw6=fe80::zz"), 400, "net0", "gw6"},
		{"ipconfig ip6 without prefix length", "PUT", "/nodes/pve1/qemu/300/config", vals("ipconfig0", "ip=dhcp,ip6=2001:db8::1"), 400,
			"ipconfig0", "ip6: invalid format"},
		{"ipconfig gw6 with auto", "PUT", "/nodes/pve1/qemu/300/config", vals("ipconfig0", "ip6=auto,gw6=fe80::1"), 400,
			"ipconfig0", "gateway specified together with DHCP"},
		{"resize size pattern", "PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "rootfs", "size", "10GB"), 400,
			"size", "value does not match the regex pattern"},
		{"disk enum", "PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "scsi0", "size", "+1G"), 400,
			"disk", "does not have a value in the enumeration"},
		{"keyAlias twice", "PUT", "/nodes/pve1/qemu/300/config", vals("net1", "virtio=BC:24:11:00:00:01,model=e1000"), 400,
			"net1", "duplicate key in comma-separated list property: model"},
		{"requires", "POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "unique", "1"), 400,
			"restore", "missing property - 'unique' requires this property"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(c.method, c.path, c.form)
			if r.Status != c.status {
				t.Fatalf("status %d (%s %v), want %d", r.Status, r.Message, r.Errors, c.status)
			}
			if r.Message != "Parameter verification failed.\n" {
				t.Errorf("message %q", r.Message)
			}
			if !strings.Contains(r.Errors[c.param], c.errPart) {
				t.Errorf("errors[%s] = %q, want it to contain %q (all: %v)", c.param, r.Errors[c.param], c.errPart, r.Errors)
			}
		})
	}
	if got := len(h.sim.SchemaViolations()); got != len(cases) {
		t.Errorf("SchemaViolations has %d entries, want %d", got, len(cases))
	}
}

func TestSchemaAcceptsValidForms(t *testing.T) {
	h := demoHarness(t)
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "rootfs", "local-lvm:8",
		"mp255", "local-lvm:1,mp=/data,backup=1", "net31", "name=eth1,bridge=vmbr0,firewall=1,ip=dhcp",
		"net0", "name=eth0,bridge=vmbr0,ip=192.0.2.10/24,gw=192.0.2.1,firewall=1", "unprivileged", "1",
		"hostname", "web-1.example.com", "ssh-public-keys", "ssh-ed25519 AAAAC3Nza x@y", "password", "secret123",
		"tags", "pvebill;svc-42", "description", "pvebill service 42", "cores", "2", "memory", "1024", "swap", "0",
		"nameserver", "192.0.2.53", "searchdomain", "example.com", "onboot", "0"), "OK")
	h.ok("PUT", "/nodes/pve1/qemu/300/config", vals("sshkeys", strings.ReplaceAll(url.QueryEscape("ssh-ed25519 AAAA x@y\n"), "+", "%20"),
		"ipconfig0", "ip=192.0.2.20/24,gw=192.0.2.1", "ciuser", "admin", "cipassword", "hunter22"), nil)
	// QEMU net's keyAlias form: "virtio=MAC" sets model=virtio and macaddr=MAC.
	h.ok("PUT", "/nodes/pve1/qemu/300/config", vals("net1", "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1"), nil)
	h.noViolations()
}

func TestUnknownPathAndMethod(t *testing.T) {
	h := demoHarness(t)
	r := h.fail("GET", "/nodes/pve1/lxc/200/bogus", nil, 501, "")
	if r.Message != "Method 'GET /nodes/pve1/lxc/200/bogus' not implemented\n" {
		t.Errorf("message %q", r.Message)
	}
	r = h.fail("DELETE", "/cluster/nextid", nil, 501, "")
	if r.Message != "Method 'DELETE /cluster/nextid' not implemented\n" {
		t.Errorf("message %q", r.Message)
	}
	h.fail("GET", "/nodes/pve1/lxc/200/agent/get-osinfo", nil, 501, "not implemented")
	h.fail("PATCH", "/nodes/pve1/lxc/200/config", nil, 501, "method 'PATCH' not available")
	vs := h.sim.SchemaViolations()
	if len(vs) != 4 || vs[0].Status != 501 {
		t.Errorf("violations %v", vs)
	}
}

func TestAuth(t *testing.T) {
	h := demoHarness(t)
	bad := []string{"", "PVEAPIToken=pvebill@pve!provision=wrong", "Bearer x", "PVEAPIToken=other@pve!x=00000000-0000-0000-0000-000000000000"}
	for _, a := range bad {
		r := h.doAuth("GET", "/nodes", nil, a)
		if r.Status != 401 || r.Message != "authentication failure\n" {
			t.Errorf("auth %q: %d %q", a, r.Status, r.Message)
		}
	}
	// a space instead of "=" after PVEAPIToken is accepted; the split is on the last "="
	r := h.doAuth("GET", "/nodes", nil, "PVEAPIToken pvebill@pve!provision=00000000-0000-0000-0000-000000000000")
	if r.Status != 200 {
		t.Errorf("space form: %d %s", r.Status, r.Message)
	}
	clk := &fixedClock{t: testEpoch}
	s := New(Options{Now: clk.Now, TokenID: "svc@pve!a=b", TokenSecret: "s3cret"})
	h2 := startHarness(t, s)
	if r := h2.doAuth("GET", "/nodes", nil, "PVEAPIToken=svc@pve!a=b=s3cret"); r.Status != 200 {
		t.Errorf("token id containing '=': %d", r.Status)
	}
}

func BenchmarkValidate(b *testing.B) {
	sc, err := loadSchema()
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]string{}
	n := sc.lookup("/nodes/pve1/lxc", vars)
	m := n.methods["POST"]
	params := vals("node", "pve1", "vmid", "5001", "ostemplate", debianTmpl, "rootfs", "local-lvm:8", "hostname", "web-1",
		"memory", "1024", "swap", "512", "cores", "2", "unprivileged", "1", "net0", "name=eth0,bridge=vmbr0,ip=dhcp,firewall=1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := map[string]string{}
		if sc.lookup("/nodes/pve1/lxc", v) == nil {
			b.Fatal("lookup")
		}
		if errs := m.validate(params); errs != nil {
			b.Fatal(errs)
		}
	}
}

func TestAuthFailDelayAndJSONBody(t *testing.T) {
	h := newHarness(t, Options{AuthFailDelay: 30 * time.Millisecond})
	start := time.Now()
	if r := h.doAuth("GET", "/version", nil, ""); r.Status != 401 {
		t.Fatalf("status %d", r.Status)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Error("401 not delayed")
	}
	h.sim.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", mib, "vztmpl")
	req, _ := http.NewRequest("POST", h.srv.URL+apiPrefix+"/nodes/pve1/lxc",
		strings.NewReader(`{"vmid":5001,"ostemplate":"`+debianTmpl+`","unprivileged":true,"swap":0,"rootfs":"local-lvm:1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "PVEAPIToken="+defaultTokenID+"="+defaultTokenSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("JSON body create: %d", resp.StatusCode)
	}
	if g, ok := h.sim.Guest(5001); !ok || g.Config["swap"] != "0" {
		t.Errorf("JSON create: %v", g.Config)
	}
}
