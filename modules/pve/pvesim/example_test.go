package pvesim_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"pvebill/modules/pve/pvesim"
)

// A test starts the demo cluster behind httptest, calls the API with the simulator's
// token and then asserts on the request log and the schema violations.
func Example() {
	sim := pvesim.Demo(pvesim.Options{})
	srv := httptest.NewServer(sim)
	defer srv.Close()

	call := func(method, path string, form url.Values) (int, string) {
		u, body := srv.URL+"/api2/json"+path, ""
		if method == http.MethodGet {
			u += "?" + form.Encode()
		} else {
			body = form.Encode()
		}
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "PVEAPIToken=pvebill@pve!provision=00000000-0000-0000-0000-000000000000")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	status, body := call("POST", "/nodes/pve1/lxc", url.Values{
		"vmid": {"5001"}, "ostemplate": {"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"},
		"rootfs": {"local-lvm:8"}, "swap": {"0"}, "unprivileged": {"1"},
	})
	var created struct{ Data string }
	_ = json.Unmarshal([]byte(body), &created)
	fmt.Println(status, strings.Split(created.Data, ":")[5])

	g, _ := sim.Guest(5001)
	fmt.Println(g.Config["rootfs"], g.Config["swap"])

	status, body = call("GET", "/cluster/resources", url.Values{"type": {"lxc"}})
	fmt.Println(status, strings.TrimSpace(body))
	fmt.Println(len(sim.Requests()), len(sim.SchemaViolations()))
	// Output:
	// 200 vzcreate
	// local-lvm:vm-5001-disk-0,size=8G 0
	// 400 {"data":null,"errors":{"type":"value 'lxc' does not have a value in the enumeration 'vm, storage, node, sdn'"},"message":"Parameter verification failed.\n"}
	// 2 1
}
