package pve

import (
	"sync"
	"time"
)

// Task-status polling: a fixed back-off either sees a task's end late (about half its last
// interval: ~1 s for a 10 s task) or polls too often. Tasks of one type on one cluster take
// similar times (a container create from the same template, a start), so the client learns,
// per task type, the span in which such tasks have been seen ending, and polls densely there
// and sparsely before it.

// windowPolls bounds the polls spent inside a learned window; minWindowStep is the finest
// spacing there (a quarter of the ceiling interval when that is finer).
const (
	windowPolls   = 5
	minWindowStep = 50 * time.Millisecond
	// maxLearnedTypes bounds the learned table (Proxmox has a few dozen task types).
	maxLearnedTypes = 128
)

// endWindow is the span, since the wait began, in which tasks of a type have been ending:
// Lo is a time they were still running, Hi a time they had stopped.
type endWindow struct {
	Lo, Hi time.Duration
}

// taskDurations learns end windows per task type.
type taskDurations struct {
	mu sync.Mutex
	by map[string]endWindow
}

func (d *taskDurations) window(typ string) (endWindow, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w, ok := d.by[typ]
	return w, ok
}

// observe records that a task of type typ was running at lo and stopped by hi. A sample that
// overlaps the learned window narrows it to the overlap (a task type with a steady duration
// converges in a few waits); a sample outside it widens the window to cover both, and later
// overlapping samples narrow it again.
func (d *taskDurations) observe(typ string, lo, hi time.Duration) {
	if typ == "" || hi < lo {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.by == nil {
		d.by = map[string]endWindow{}
	}
	w, ok := d.by[typ]
	switch {
	case !ok:
		if len(d.by) >= maxLearnedTypes {
			return
		}
		w = endWindow{lo, hi}
	case lo <= w.Hi && hi >= w.Lo:
		w = endWindow{max(lo, w.Lo), min(hi, w.Hi)}
	default:
		w = endWindow{min(lo, w.Lo), max(hi, w.Hi)}
	}
	d.by[typ] = w
}

// pollSchedule says when to poll a task next. Without a learned window it backs off from the
// first interval by the factor up to the ceiling. With one, it polls before the window no more
// often than every quarter of the window's start or the ceiling, whichever is longer (a task
// that ends early, a quick failure too, is seen that late at most), then up to windowPolls times
// evenly across the window (once, at its end, when the window is narrower than minWindowStep),
// and past the window falls back to the ceiling.
type pollSchedule struct {
	interval, ceiling time.Duration
	factor            float64
	win               endWindow
	learned           bool
	polls             int
}

// next returns when, since the wait began, to poll after a poll at `at` found the task running
// (at is 0 before the first poll).
func (p *pollSchedule) next(at time.Duration) time.Duration {
	p.polls++
	if !p.learned || at >= p.win.Hi {
		switch {
		case p.polls == 1:
		case p.learned:
			// The window passed with the task still running: it runs longer than its type
			// used to; poll at the ceiling from here.
			p.interval = p.ceiling
		default:
			p.interval = min(time.Duration(float64(p.interval)*p.factor), p.ceiling)
		}
		return at + p.interval
	}
	fine := min(minWindowStep, p.ceiling/4)
	step := max(fine, (p.win.Hi-p.win.Lo)/windowPolls)
	if at < p.win.Lo {
		// The window's first poll: a step into it, or its end when it is narrower than a step.
		first := max(min(p.win.Lo+step, p.win.Hi), at+fine)
		if gap := max(p.ceiling, p.win.Lo/4); first-at > gap {
			return at + gap
		}
		return first
	}
	return at + step
}
