package pve

import (
	"math/rand/v2"
	"testing"
	"time"
)

// virtualWait runs Wait's polling loop in virtual time for a task that stops at dur, with
// polls answered instantly: the polls it took, when it saw the task stopped, and the learning
// it leaves in d (the same calls Wait makes).
func virtualWait(c *Client, typ string, dur time.Duration) (polls int, seen time.Duration) {
	sched := pollSchedule{interval: c.pollInterval, ceiling: c.pollMax, factor: c.pollFactor}
	sched.win, sched.learned = c.durations.window(typ)
	running := time.Duration(0)
	for at := sched.next(0); ; at = sched.next(at) {
		polls++
		if at >= dur {
			c.durations.observe(typ, running, at)
			return polls, at
		}
		running = at
	}
}

func defaultClient(t *testing.T) *Client {
	return newTestClient(t, Config{URL: "https://pve:8006", TokenID: testTokenID, TokenSecret: testSecret}, nil)
}

// TestDefaultPollSchedule: with the production defaults and nothing learned, a task that takes
// 10 s is seen finished within 10 status polls, and a quick one at the first poll, 100 ms in.
func TestDefaultPollSchedule(t *testing.T) {
	c := defaultClient(t)
	if n, at := virtualWait(c, "", 10*time.Second); n > 10 || at > 12*time.Second {
		t.Errorf("10 s task: %d polls, seen at %v", n, at)
	}
	if n, at := virtualWait(c, "", 50*time.Millisecond); n != 1 || at != 100*time.Millisecond {
		t.Errorf("quick task: %d polls, seen at %v", n, at)
	}
	s := pollSchedule{interval: time.Second, ceiling: 2 * time.Second, factor: 2}
	s.next(0)
	s.next(time.Second)
	if got := s.next(3*time.Second) - 3*time.Second; got != 2*time.Second {
		t.Errorf("interval not capped: %v", got)
	}
}

// TestPollScheduleLearnsTaskEnds (R11: every task is waited for until it stops; this is how
// often it is asked): tasks of one type with a steady duration are seen stopped
// within minWindowStep of their end from the fourth wait on, never with more than 10 polls for
// a 10 s task (while learning too), and each type learns on its own.
func TestPollScheduleLearnsTaskEnds(t *testing.T) {
	c := defaultClient(t)
	const dur = 10 * time.Second
	for i := range 8 {
		polls, seen := virtualWait(c, "vzcreate", dur)
		if polls > 10 {
			t.Errorf("wait %d: %d polls for a 10 s task", i+1, polls)
		}
		late := seen - dur
		switch {
		case i == 0 && late > c.pollMax:
			t.Errorf("wait 1 (nothing learned): seen %v late", late)
		case i >= 3 && late > minWindowStep:
			t.Errorf("wait %d: seen %v late, want <= %v", i+1, late, minWindowStep)
		}
		t.Logf("wait %d: %d polls, %v late", i+1, polls, late)
	}
	if _, seen := virtualWait(c, "vzstart", 2500*time.Millisecond); seen-2500*time.Millisecond < 500*time.Millisecond {
		t.Errorf("vzstart used what vzcreate learned: seen %v", seen)
	}
	// A learned task shorter than the ceiling needs no poll before its window: two polls at most.
	for range 4 {
		virtualWait(c, "vzstart", 2500*time.Millisecond)
	}
	if polls, seen := virtualWait(c, "vzstart", 2500*time.Millisecond); polls > 2 || seen-2500*time.Millisecond > minWindowStep {
		t.Errorf("learned 2.5 s task: %d polls, seen %v late", polls, seen-2500*time.Millisecond)
	}
}

// TestPollScheduleAdapts: a task that runs longer than its type's window is seen stopped within
// the ceiling interval of its end; one that ends before the window within a quarter of the
// window's start (or the ceiling, if longer); a type whose durations spread widely keeps a
// bounded number of polls.
func TestPollScheduleAdapts(t *testing.T) {
	c := defaultClient(t)
	for range 4 {
		virtualWait(c, "vzcreate", 10*time.Second)
	}
	// Longer than learned: the window passes, the ceiling takes over.
	if polls, seen := virtualWait(c, "vzcreate", 30*time.Second); seen-30*time.Second > c.pollMax || polls > 20 {
		t.Errorf("30 s task after 10 s ones: %d polls, seen %v late", polls, seen-30*time.Second)
	}
	// Shorter than learned (it failed at 1.5 s, or got quicker).
	if _, seen := virtualWait(c, "vzcreate", 1500*time.Millisecond); seen > 1500*time.Millisecond+10*time.Second/4 {
		t.Errorf("1.5 s task after 10 s ones: seen at %v", seen)
	}
	// Spread durations (5-15 s): every wait sees the end within a quarter of the longest
	// expected time, with no more than 14 polls (the back-off alone takes 11 for 15 s).
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		dur := 5*time.Second + time.Duration(rnd.Int64N(int64(10*time.Second)))
		polls, seen := virtualWait(c, "vzdump", dur)
		if late := seen - dur; late > 15*time.Second/4 || polls > 14 {
			t.Fatalf("spread wait %d (%v): %d polls, %v late", i, dur, polls, late)
		}
	}
	// A learned quick type keeps its first poll early.
	for range 3 {
		virtualWait(c, "qmstart", 30*time.Millisecond)
	}
	if polls, seen := virtualWait(c, "qmstart", 30*time.Millisecond); polls != 1 || seen > 100*time.Millisecond {
		t.Errorf("quick learned task: %d polls, seen at %v", polls, seen)
	}
}

// TestTaskDurationsBounded: the learned table holds at most maxLearnedTypes types.
func TestTaskDurationsBounded(t *testing.T) {
	var d taskDurations
	for i := range maxLearnedTypes + 50 {
		d.observe(string(rune('a'+i%26))+string(rune('a'+i/26)), 0, time.Second)
	}
	if len(d.by) != maxLearnedTypes {
		t.Errorf("%d types learned", len(d.by))
	}
	d.observe("", 0, time.Second)
	d.observe("x", time.Second, 0)
	if _, ok := d.window("x"); ok {
		t.Error("learned from an inverted sample")
	}
}
