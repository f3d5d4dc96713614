package pve

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// nodeIndex builds a container index answer of n entries shaped like the captured one
// (node-lxc-index.json): vmid a string as before PVE 8.2 when oldIndex, else a number.
func nodeIndex(n int, oldIndex bool) []byte {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		vmid := fmt.Sprint(1000 + i)
		if oldIndex {
			vmid = `"` + vmid + `"`
		}
		fmt.Fprintf(&b, `{"cpu":0.0123,"cpus":1,"disk":640397312,"diskread":273694720,"diskwrite":200982528,"maxdisk":8350298112,`+
			`"maxmem":536870912,"maxswap":536870912,"mem":34304000,"name":"ct%d","netin":94558593,"netout":1618542,"pid":%d,`+
			`"status":"running","swap":%d,"type":"lxc","uptime":919760,"vmid":%s}`, i, 248000+i, i*4096, vmid)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkDecodeNodeIndex decodes a node's container index of 500 containers (what the swap
// sampler reads once per node and round) through the envelope and the lenient number types.
func BenchmarkDecodeNodeIndex(b *testing.B) {
	for _, old := range []bool{false, true} {
		body := nodeIndex(500, old)
		b.Run(fmt.Sprintf("old_index=%v", old), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var env envelope
				if err := json.Unmarshal(body, &env); err != nil {
					b.Fatal(err)
				}
				var rows []LXCStatus
				if err := json.Unmarshal(env.Data, &rows); err != nil {
					b.Fatal(err)
				}
				if len(rows) != 500 || rows[499].VMID.Int() != 1499 || rows[1].Swap == nil {
					b.Fatalf("decoded %d rows", len(rows))
				}
			}
		})
	}
}
