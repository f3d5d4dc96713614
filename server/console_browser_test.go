package server_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"pvebill/modules/pve/pvesim"
)

// browserWatch records what a page did that the console test forbids: console errors, uncaught
// exceptions, log errors (a Content-Security-Policy violation is one), and any request or
// WebSocket to a host other than pvebill's.
type browserWatch struct {
	host string
	mu   sync.Mutex
	bad  []string
	reqs int
}

func (w *browserWatch) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			w.bad = append(w.bad, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		msg := ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			msg += " " + ev.ExceptionDetails.Exception.Description
		}
		w.bad = append(w.bad, "exception: "+msg)
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			w.bad = append(w.bad, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		w.reqs++
		w.checkHost(ev.Request.URL)
	case *network.EventWebSocketCreated:
		w.checkHost(ev.URL)
	}
}

func (w *browserWatch) checkHost(raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Host != w.host && u.Scheme != "data") {
		w.bad = append(w.bad, "request to another host: "+raw)
	}
}

func (w *browserWatch) problems() ([]string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bad...), w.reqs
}

// newBrowser starts Debian's chromium headless with a fresh profile, or skips the test when it
// is not installed (fails when CI is set).
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed and CI is set (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(900, 600)}
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// openInTab opens url in a new tab of the browser, watched, and returns the tab's context.
func openInTab(bctx context.Context, t *testing.T, rawURL string) (context.Context, *browserWatch) {
	t.Helper()
	u, _ := url.Parse(rawURL)
	w := &browserWatch{host: u.Host}
	tctx, cancel := chromedp.NewContext(bctx, chromedp.WithListener(w.listen))
	t.Cleanup(cancel)
	if err := chromedp.Do(tctx); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(tctx, 30*time.Second)
	t.Cleanup(wcancel)
	if err := chromedp.Do(wctx, chromedp.Navigate(rawURL),
		chromedp.WaitVisible(chromedp.CSS(`body[data-state="connected"]`))); err != nil {
		bad, _ := w.problems()
		t.Fatalf("open %s: %v (page problems: %v)", rawURL, err, bad)
	}
	return wctx, w
}

// screenshot writes the tab's screenshot to the test's artifact directory (go test -artifacts)
// and, with PVEBILL_UPDATE_SCREENSHOTS set, to docs/ for docs/console.md.
func screenshot(tctx context.Context, t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("PVEBILL_UPDATE_SCREENSHOTS") != "" {
		if err := os.WriteFile(filepath.Join("..", "docs", name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// typeKeys types text as a keyboard does: each key's raw key-down, its character and its
// key-up (a key-down that carries the text as well makes the page see every character twice).
func typeKeys(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, r := range text {
			for _, k := range kb.Encode(r) {
				if k.Type == input.DispatchKeyEventTypeKeyDown {
					k.Type, k.Text, k.UnmodifiedText = input.DispatchKeyEventTypeRawKeyDown, "", ""
				}
				if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, *k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// The console in a real browser (R41): Debian's chromium opens a container's console URL,
// types `hostname` into xterm.js and reads the guest's name back from the terminal; it opens a
// VM's console URL and noVNC draws the simulator's screen (a pixel of the canvas has its
// background colour). Neither page logs an error (a CSP violation included) or asks any host
// but pvebill for anything; a screenshot of each goes to the test's artifact directory.
func TestConsoleInBrowser(t *testing.T) {
	bctx := newBrowser(t)
	h := newConsoleHarness(t, "sqlite", 0)
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("web-ct", "ct-1g")))
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("web-vm", "vm-2g")))

	t.Run("terminal", func(t *testing.T) {
		tctx, w := openInTab(bctx, t, h.openConsole(t, "web-ct", "", "terminal"))
		read := `(() => { const b = window.pvebillTerminal.buffer.active; const out = [];
			for (let i = 0; i < b.length; i++) { out.push(b.getLine(i).translateToString(true)); } return out.join("\n"); })()`
		err := chromedp.Do(tctx,
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Poll[chromedp.Void](`window.pvebillTerminal.buffer.active.getLine(0).translateToString(true).includes(":~# ")`)(ctx, tg)
				return err
			}),
			chromedp.Focus(chromedp.CSS(`.xterm-helper-textarea`)), typeKeys("hostname\r"),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Poll[chromedp.Void](read+`.split("\n").includes("web1.example.com")`, chromedp.WithPollingTimeout(10*time.Second))(ctx, tg)
				return err
			}))
		text, _ := chromedp.Run(tctx, chromedp.Evaluate[string](read))
		if err != nil {
			t.Fatalf("terminal: %v (text %q)", err, text)
		}
		if !strings.Contains(text, "root@web1.example.com:~# hostname\nweb1.example.com\nroot@web1.example.com:~#") {
			t.Errorf("terminal reads %q", text)
		}
		screenshot(tctx, t, "console-terminal.png")
		if bad, n := w.problems(); len(bad) > 0 || n < 4 {
			t.Errorf("%d requests; page problems: %v", n, bad)
		}
	})

	t.Run("vnc", func(t *testing.T) {
		tctx, w := openInTab(bctx, t, h.openConsole(t, "web-vm", "", "vnc"))
		pixel := `(() => { const c = document.querySelector("#console canvas"); if (!c || c.width < 100) return [];
			const d = c.getContext("2d").getImageData(4, 4, 1, 1).data; return [d[0], d[1], d[2]]; })()`
		want := pvesim.ConsoleBackground
		_, err := chromedp.Run(tctx, chromedp.Poll[chromedp.Void](fmt.Sprintf(`JSON.stringify(%s) === "[%d,%d,%d]"`, pixel, want.R, want.G, want.B),
			chromedp.WithPollingTimeout(10*time.Second)))
		if err != nil {
			rgb, _ := chromedp.Run(tctx, chromedp.Evaluate[[]int](pixel))
			t.Fatalf("canvas: %v (pixel %v, want %v)", err, rgb, want)
		}
		screenshot(tctx, t, "console-vnc.png")
		if bad, n := w.problems(); len(bad) > 0 || n < 4 {
			t.Errorf("%d requests; page problems: %v", n, bad)
		}
	})
}
