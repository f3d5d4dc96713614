package agent

import (
	"testing"
	"time"
)

// R57: reconnects wait a full-jitter backoff: a random time up to 1 s·2^attempt, capped at 30 s,
// never 0 and never more; waits spread over the whole range (no lock-step reconnect storm).
func TestFullJitterBackoff(t *testing.T) {
	for attempt, ceiling := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second} {
		lowHalf, highHalf := 0, 0
		for range 2000 {
			d := fullJitter(backoffBase, backoffMax, attempt)
			if d <= 0 || d > ceiling {
				t.Fatalf("attempt %d: wait %s outside (0, %s]", attempt, d, ceiling)
			}
			if d < ceiling/2 {
				lowHalf++
			} else {
				highHalf++
			}
		}
		if lowHalf < 800 || highHalf < 800 {
			t.Fatalf("attempt %d: waits not spread over (0, %s]: %d below half, %d above", attempt, ceiling, lowHalf, highHalf)
		}
	}
	if fullJitter(backoffBase, backoffMax, 1000) > backoffMax {
		t.Fatal("the cap does not hold for a long outage")
	}
}

// The backoff starts again from 1 s once a tunnel stayed up a minute, and keeps growing while
// tunnels break sooner.
func TestBackoffResetsAfterAMinuteUp(t *testing.T) {
	if afterTunnel(6, time.Minute) != 0 || afterTunnel(6, 59*time.Second) != 6 || afterTunnel(0, 0) != 0 {
		t.Fatal("the backoff does not reset after a minute up, or resets sooner")
	}
}
