package plans_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/plans"
)

func TestServiceRoundTrip(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		svc := plans.NewService(db, plans.Options{})

		p, created, err := svc.Put(ctx, "ct-test", containerSpec())
		if err != nil || !created || p.Code != "ct-test" {
			t.Fatalf("first put: %+v %v %v", p, created, err)
		}
		row, err := db.GetPlan(ctx, "ct-test")
		if err != nil {
			t.Fatal(err)
		}
		// R5: the stored plan says swap 0 in so many words.
		if row.Source != "api" || !strings.Contains(row.Body, `"swap_mib":0`) {
			t.Fatalf("row %+v", row)
		}
		firstCreated := row.CreatedAt

		s := containerSpec()
		s.Code = "" // the path's code is taken
		s.Cores = new(4)
		s.SwapMiB = new(0)
		p, created, err = svc.Put(ctx, "ct-test", s)
		if err != nil || created || p.Cores != 4 {
			t.Fatalf("second put: %+v %v %v", p, created, err)
		}
		got, err := svc.Get(ctx, "ct-test")
		if err != nil || got.Cores != 4 || got.SwapMiB != 0 || len(got.Nodes) != 0 || got.Nodes == nil {
			t.Fatalf("get: %+v %v", got, err)
		}
		row, _ = db.GetPlan(ctx, "ct-test")
		if !row.CreatedAt.Equal(firstCreated) || row.UpdatedAt.Before(firstCreated) {
			t.Fatalf("timestamps: created %v → %v, updated %v", firstCreated, row.CreatedAt, row.UpdatedAt)
		}

		if _, _, err := svc.Put(ctx, "vm-test", vmSpec()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.Put(ctx, "flex-test", flexSpec()); err != nil {
			t.Fatal(err)
		}
		list, err := svc.List(ctx)
		if err != nil || len(list) != 3 || list[0].Code != "ct-test" || list[1].Code != "flex-test" || list[2].Code != "vm-test" {
			t.Fatalf("list: %v %v", list, err)
		}

		if err := svc.Delete(ctx, "vm-test"); err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{svc.Delete(ctx, "vm-test"), func() error { _, err := svc.Get(ctx, "vm-test"); return err }()} {
			var p *i18n.Problem
			if !errors.As(err, &p) || p.Status != 404 || p.Code != i18n.CodeNotFound {
				t.Fatalf("after delete: %v", err)
			}
		}
	})
}

func TestPutRefusesWithoutWriting(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		svc := plans.NewService(db, plans.Options{Clusters: plans.Clusters{"default": nil}})

		// The code in the body must match the path's.
		_, _, err := svc.Put(ctx, "other", containerSpec())
		if p := problemOf(t, err); p.Code != i18n.CodeValidationFailed || p.Fields[0].Field != "code" {
			t.Fatalf("code mismatch: %v", err)
		}
		// R15 at save.
		s := containerSpec()
		s.VMSuspendMode = plans.SuspendPause
		_, _, err = svc.Put(ctx, "ct-test", s)
		if p := problemOf(t, err); p.Code != i18n.CodeNotPossibleContainer || p.Permanence != i18n.Permanent {
			t.Fatalf("pause: %v", err)
		}
		// A cluster that is not configured.
		s = containerSpec()
		s.Cluster = "elsewhere"
		if _, _, err = svc.Put(ctx, "ct-test", s); problemOf(t, err).Fields[0].Field != "cluster" {
			t.Fatalf("cluster: %v", err)
		}
		if list, err := svc.List(ctx); err != nil || len(list) != 0 {
			t.Fatalf("refused plans were stored: %v %v", list, err)
		}
	})
}

// Two first saves of one code at once: both succeed, exactly one reports the creation.
func TestConcurrentCreate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		svc := plans.NewService(db, plans.Options{})
		const n = 6
		var wg sync.WaitGroup
		created := make(chan bool, n)
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, c, err := svc.Put(ctx, "ct-test", containerSpec())
				created <- c
				errs <- err
			}()
		}
		wg.Wait()
		close(created)
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		count := 0
		for c := range created {
			if c {
				count++
			}
		}
		if count != 1 {
			t.Fatalf("%d saves reported a creation", count)
		}
	})
}

const planFile = `# two plans
- code: small
  name: Small
  guest_types: [container]
  cluster: default
  cores: 1
  memory_mib: 1024
  disk_gib: 10
  storage: local-lvm
  bridge: vmbr0
  os:
    container:
      debian-12: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
- code: big-vm
  name: Big VM
  guest_types: [vm]
  cluster: default
  cores: 8
  memory_mib: 16384
  disk_gib: 200
  storage: local-lvm
  bridge: vmbr0
  vm_suspend_mode: pause
  vm_clone: linked
  nodes: [pve2]
  ip_pool: pool-a
  os:
    vm: {debian-12: 9000}
`

func TestLoadFile(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		dir := t.TempDir()
		path := filepath.Join(dir, "plans.yaml")
		if err := os.WriteFile(path, []byte(planFile), 0o600); err != nil {
			t.Fatal(err)
		}
		svc := plans.NewService(db, plans.Options{Clusters: plans.Clusters{"default": {"pve1", "pve2"}}})

		// An API change to a plan that the file also names is replaced at the next start.
		s := containerSpec()
		s.Code = "small"
		if _, _, err := svc.Put(ctx, "small", s); err != nil {
			t.Fatal(err)
		}
		loaded, err := svc.LoadFile(ctx, path)
		if err != nil || len(loaded) != 2 {
			t.Fatalf("load: %v %v", loaded, err)
		}
		small, err := svc.Get(ctx, "small")
		if err != nil || small.Cores != 1 || small.SwapMiB != 0 {
			t.Fatalf("small: %+v %v", small, err)
		}
		big, err := svc.Get(ctx, "big-vm")
		if err != nil || big.VMClone != plans.CloneLinked || big.VMSuspendMode != plans.SuspendPause ||
			big.IPPool == nil || *big.IPPool != "pool-a" || len(big.Nodes) != 1 || big.Nodes[0] != "pve2" {
			t.Fatalf("big-vm: %+v %v", big, err)
		}
		for _, code := range []string{"small", "big-vm"} {
			row, _ := db.GetPlan(ctx, code)
			if row.Source != "file" {
				t.Fatalf("%s source %q", code, row.Source)
			}
		}
		// Loading again is an upsert: nothing doubles.
		if _, err := svc.LoadFile(ctx, path); err != nil {
			t.Fatal(err)
		}
		if list, _ := svc.List(ctx); len(list) != 2 {
			t.Fatalf("after reload: %v", list)
		}

		// A file with one bad plan changes nothing and names the plan and the field.
		bad := strings.Replace(planFile, "cores: 8", "cores: -8", 1)
		bad = strings.Replace(bad, "name: Small", "name: Smaller", 1)
		badPath := filepath.Join(dir, "bad.yaml")
		_ = os.WriteFile(badPath, []byte(bad), 0o600)
		_, err = svc.LoadFile(ctx, badPath)
		if err == nil || !strings.Contains(err.Error(), "plan 2 (big-vm)") || !strings.Contains(err.Error(), "cores:too_small") {
			t.Fatalf("bad file: %v", err)
		}
		if small, _ := svc.Get(ctx, "small"); small.Name != "Small" {
			t.Fatalf("a refused file was partly applied: %+v", small)
		}
		// Unknown keys, duplicate codes and a missing file are refused too.
		first := planFile[len("# two plans\n"):strings.Index(planFile, "- code: big-vm")]
		for name, c := range map[string]struct{ doc, want string }{
			"typo":      {strings.Replace(planFile, "disk_gib: 10", "disk_gib: 10\n  swap_mb: 512", 1), "field swap_mb not found"},
			"duplicate": {planFile + first, "plan 3 (small): the same code as plan 1"},
			"node":      {strings.Replace(planFile, "nodes: [pve2]", "nodes: [pve7]", 1), "nodes[0]:not_allowed_value"},
		} {
			p := filepath.Join(dir, name+".yaml")
			_ = os.WriteFile(p, []byte(c.doc), 0o600)
			if _, err := svc.LoadFile(ctx, p); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want %q", name, err, c.want)
			}
		}
		if _, err := svc.LoadFile(ctx, filepath.Join(dir, "missing.yaml")); err == nil {
			t.Error("missing file accepted")
		}
	})
}
