package pve

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"pvebill/modules/pve/pveconf"
)

// LogTailLines is how many task log lines a TaskResult keeps.
const LogTailLines = 20

// parseUPID decodes a UPID with pveconf.ParseUPID (docs/proxmox.md §2.3). The UPID also goes
// into request paths, so it must be a valid path segment.
func parseUPID(upid string) (pveconf.UPID, error) {
	u, err := pveconf.ParseUPID(upid)
	if err != nil || checkIdent("UPID", upid) != nil {
		return pveconf.UPID{}, fmt.Errorf("pve: %q is not a UPID", upid)
	}
	return u, nil
}

// parseUPIDNode returns the node named in a UPID. Task status and log must be read from that
// node: any other node answers "no such task".
func parseUPIDNode(upid string) (string, error) {
	u, err := parseUPID(upid)
	return u.Node, err
}

func taskPath(upid, node, leaf string) string {
	return "/nodes/" + node + "/tasks/" + upid + "/" + leaf
}

// TaskStatus reads a task's status from the node named in the UPID.
func (c *Client) TaskStatus(ctx context.Context, upid string) (TaskStatus, error) {
	var st TaskStatus
	node, err := parseUPIDNode(upid)
	if err != nil {
		return st, err
	}
	err = c.DoRequest(ctx, http.MethodGet, taskPath(upid, node, "status"), nil, &st)
	return st, err
}

// TaskLog reads limit lines of a task log starting at line start, and the
// log's total line count.
func (c *Client) TaskLog(ctx context.Context, upid string, start, limit int) ([]TaskLogLine, int, error) {
	node, err := parseUPIDNode(upid)
	if err != nil {
		return nil, 0, err
	}
	q := url.Values{}
	q.Set("start", strconv.Itoa(start))
	q.Set("limit", strconv.Itoa(limit))
	path := taskPath(upid, node, "log")
	env, err := c.do(ctx, http.MethodGet, path, q)
	if err != nil {
		return nil, 0, err
	}
	var lines []TaskLogLine
	if err := c.decodeData(http.MethodGet, path, env, &lines); err != nil {
		return nil, 0, err
	}
	total := len(lines) + start
	if env.Total != nil {
		total = env.Total.Int()
	}
	return lines, total, nil
}

// logTail returns the last n lines of a task log.
func (c *Client) logTail(ctx context.Context, upid string, n int) ([]string, error) {
	const page = 50
	lines, total, err := c.TaskLog(ctx, upid, 0, page)
	if err != nil {
		return nil, err
	}
	if total > len(lines) {
		lines, _, err = c.TaskLog(ctx, upid, max(0, total-n), n)
		if err != nil {
			return nil, err
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = c.redact(l.T)
	}
	return out, nil
}

var warningsRE = regexp.MustCompile(`^WARNINGS: (\d+)$`)

// Wait polls the task until it stops. It assumes the task was started just
// before (as every start call of this client does). The first poll comes after
// TaskPollInterval; without history for the task's type, each following
// interval is TaskPollFactor times longer, up to TaskPollMaxInterval. Once
// tasks of the type have been seen ending, Wait polls densely around the span
// they ended in and sparsely before it (pollSchedule). A task that ends "OK"
// or "WARNINGS: n" is a success (with its log tail when it warned); any other
// exit status is returned as a [*TaskError] carrying the log tail.
func (c *Client) Wait(ctx context.Context, upid string) (TaskResult, error) {
	res := TaskResult{UPID: upid}
	u, err := parseUPID(upid)
	if err != nil {
		return res, err
	}
	res.Node, res.Type = u.Node, u.Type

	begin := time.Now()
	sched := pollSchedule{interval: c.pollInterval, ceiling: c.pollMax, factor: c.pollFactor}
	sched.win, sched.learned = c.durations.window(res.Type)
	at := sched.next(0)
	timer := time.NewTimer(at)
	defer timer.Stop()
	running := time.Duration(0) // when a poll last found the task running
	for {
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("pve: wait for task %s: %w", upid, ctx.Err())
		case <-timer.C:
		}
		sent := time.Since(begin)
		st, err := c.TaskStatus(ctx, upid)
		if err != nil {
			return res, fmt.Errorf("pve: wait for task %s: %w", upid, err)
		}
		if !st.Running() {
			res, err := c.finish(ctx, res, st)
			if res.OK {
				c.durations.observe(res.Type, running, time.Since(begin))
			}
			return res, err
		}
		running = sent
		at = max(sched.next(sent), time.Since(begin))
		timer.Reset(at - time.Since(begin))
	}
}

func (c *Client) finish(ctx context.Context, res TaskResult, st TaskStatus) (TaskResult, error) {
	if st.Type != "" {
		res.Type = st.Type
	}
	res.ExitStatus = c.redact(strings.TrimSpace(st.ExitStatus))
	if res.ExitStatus == "" {
		res.ExitStatus = "unexpected status"
	}
	if res.ExitStatus == "OK" {
		res.OK = true
		return res, nil
	}
	if m := warningsRE.FindStringSubmatch(res.ExitStatus); m != nil {
		res.OK = true
		res.Warnings, _ = strconv.Atoi(m[1])
	}
	// The tail is best effort: the task's outcome is known either way, and
	// an unreadable log must not turn a success into an error.
	if tail, err := c.logTail(ctx, res.UPID, LogTailLines); err == nil {
		res.LogTail = tail
	}
	if res.OK {
		return res, nil
	}
	return res, &TaskError{Result: res}
}

// startTask sends a request whose answer is a UPID.
func (c *Client) startTask(ctx context.Context, method, path string, params url.Values) (string, error) {
	var upid string
	if err := c.DoRequest(ctx, method, path, params, &upid); err != nil {
		return "", err
	}
	if _, err := parseUPIDNode(upid); err != nil {
		return "", &APIError{Method: method, Path: path, Status: 200, Kind: ErrUnexpected,
			Message: c.redact(fmt.Sprintf("expected a UPID, got %q", upid)), MaybeApplied: method != http.MethodGet}
	}
	if f, ok := ctx.Value(taskObserverKey{}).(func(string)); ok {
		f(upid)
	}
	return upid, nil
}

type taskObserverKey struct{}

// WithTaskObserver returns a context under which every task this client starts is handed to
// f (its UPID) before the start call returns, hence before anything waits on it: a caller
// records it so that whoever takes its work over can read how the task ended.
func WithTaskObserver(ctx context.Context, f func(upid string)) context.Context {
	return context.WithValue(ctx, taskObserverKey{}, f)
}
