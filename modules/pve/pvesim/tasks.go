package pvesim

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// taskTable is the tasks of every node, by UPID and in start order, and the task
// durations per type. It is guarded by Sim.mu; nextDue is read without it.
type taskTable struct {
	tasks    map[string]*task
	taskList []*task
	taskDur  map[string]time.Duration
	nextDue  atomic.Int64 // unix nanos of the earliest due running task; 0 = none
}

func (tt *taskTable) resetTasks() {
	tt.tasks = map[string]*task{}
	tt.taskList = nil
	tt.taskDur = map[string]time.Duration{}
	tt.nextDue.Store(0)
}

// task is one worker task (a UPID). Guarded by Sim.mu.
type task struct {
	upid      string
	node      string
	pid       int
	pstart    int
	starttime int64
	typ       string
	id        string
	user      string
	due       time.Time
	running   bool
	exit      string
	endtime   int64
	started   time.Time // the simulator's clock at the start and the end, to the nanosecond
	ended     time.Time
	log       []string
	warnings  int
	vmids     []int // a vzdump's guests

	// finish applies the task's effect when it completes; an error fails the task.
	finish func(t *task) error
	// rollback undoes what the synchronous part did when the task fails.
	rollback func(t *task)
	failWith string
	// unpackFail fails a restore between destroying the old volumes and unpacking.
	unpackFail string
	warnWith   int
}

func (t *task) logf(format string, a ...any) { t.log = append(t.log, fmt.Sprintf(format, a...)) }

func (t *task) warnf(format string, a ...any) {
	t.warnings++
	t.log = append(t.log, "WARN: "+fmt.Sprintf(format, a...))
}

// newTask registers a running task; callers hold the write lock. The returned task's
// finish/rollback are set by the caller before the lock is released.
func (s *Sim) newTask(c *reqCtx, node, typ, id string) *task {
	s.pidSeq++
	now := s.now()
	t := &task{node: node, pid: 200000 + s.pidSeq, pstart: 3000000 + s.pidSeq*7, starttime: now.Unix(),
		typ: typ, id: id, user: c.user, running: true}
	t.upid = fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", node, t.pid, t.pstart, t.starttime, typ, id, t.user)
	d, ok := s.taskDur[typ]
	if !ok {
		d = s.opts.TaskDuration
	}
	t.due, t.started = now.Add(d), now
	if c.fault != nil {
		t.failWith = c.fault.TaskFail
		t.unpackFail = c.fault.UnpackFail
		t.warnWith = c.fault.TaskWarnings
	}
	s.tasks[t.upid] = t
	s.taskList = append(s.taskList, t)
	s.noteDue(t.due)
	return t
}

func (s *Sim) noteDue(due time.Time) {
	n := due.UnixNano()
	for {
		cur := s.nextDue.Load()
		if cur != 0 && cur <= n {
			return
		}
		if s.nextDue.CompareAndSwap(cur, n) {
			return
		}
	}
}

// settle completes every running task whose time has come. It takes the write lock only
// when a task is due, so reads stay parallel.
func (s *Sim) settle() {
	due := s.nextDue.Load()
	if due == 0 || s.now().UnixNano() < due {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleLocked()
}

func (s *Sim) settleLocked() {
	now := s.now()
	next := int64(0)
	for _, t := range s.taskList {
		if !t.running {
			continue
		}
		if t.due.After(now) {
			if n := t.due.UnixNano(); next == 0 || n < next {
				next = n
			}
			continue
		}
		s.completeTask(t)
	}
	s.nextDue.Store(next)
}

func (s *Sim) completeTask(t *task) {
	t.running = false
	t.ended = s.now()
	t.endtime = t.ended.Unix()
	var err error
	if t.failWith != "" {
		err = fmt.Errorf("%s", t.failWith)
	} else if t.finish != nil {
		err = t.finish(t)
	}
	if err != nil {
		if t.rollback != nil {
			t.rollback(t)
		}
		msg := strings.TrimRight(err.Error(), "\n")
		t.log = append(t.log, "TASK ERROR: "+msg)
		t.exit = msg
		return
	}
	t.warnings += t.warnWith
	for i := 0; i < t.warnWith; i++ {
		t.log = append(t.log, "WARN: injected warning")
	}
	if t.warnings > 0 {
		t.log = append(t.log, fmt.Sprintf("TASK WARNINGS: %d", t.warnings))
		t.exit = fmt.Sprintf("WARNINGS: %d", t.warnings)
		return
	}
	t.log = append(t.log, "TASK OK")
	t.exit = "OK"
}

// runningTaskFor reports whether a task of this guest is still running. Callers hold s.mu.
func (s *Sim) lookupTask(node, upid string) (*task, error) {
	t := s.tasks[upid]
	if t == nil || t.node != node {
		if !strings.HasPrefix(upid, "UPID:") {
			return nil, paramErr(map[string]string{"upid": "unable to parse worker upid"})
		}
		return nil, paramErr(map[string]string{"upid": "no such task"})
	}
	return t, nil
}

func splitUser(u string) (user, token string) {
	if i := strings.Index(u, "!"); i >= 0 {
		return u[:i], u[i+1:]
	}
	return u, ""
}

func taskStatus(t *task) map[string]any {
	user, token := splitUser(t.user)
	m := map[string]any{
		"upid": t.upid, "node": t.node, "pid": t.pid, "pstart": t.pstart, "starttime": t.starttime,
		"type": t.typ, "id": t.id, "user": user,
	}
	if token != "" {
		m["tokenid"] = token
	}
	if t.running {
		m["status"] = "running"
	} else {
		m["status"] = "stopped"
		m["exitstatus"] = t.exit
	}
	return m
}

func (s *Sim) hTaskStatus(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.lookupTask(c.node, c.str("upid"))
	if err != nil {
		return nil, err
	}
	return taskStatus(t), nil
}

func (s *Sim) hTaskLog(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.lookupTask(c.node, c.str("upid"))
	if err != nil {
		return nil, err
	}
	start, limit := 0, 50
	if c.has("start") {
		start = c.integer("start")
	}
	if c.has("limit") {
		limit = c.integer("limit")
	}
	lines := t.log
	out := []map[string]any{}
	for i := start; i < len(lines) && len(out) < limit; i++ {
		out = append(out, map[string]any{"n": i + 1, "t": lines[i]})
	}
	if len(lines) == 0 && start == 0 {
		out = append(out, map[string]any{"n": 1, "t": "no content"})
		return withTotal{data: out, total: 1}, nil
	}
	return withTotal{data: out, total: len(lines)}, nil
}

// Tasks returns the UPIDs of all tasks in start order (for assertions).
func (s *Sim) Tasks() []string {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.taskList))
	for _, t := range s.taskList {
		out = append(out, t.upid)
	}
	return out
}

// TaskLog returns a task's log lines.
func (s *Sim) TaskLog(upid string) []string {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.tasks[upid]; t != nil {
		return append([]string(nil), t.log...)
	}
	return nil
}

// taskFilter is the query of GET /nodes/{node}/tasks.
type taskFilter struct {
	node, vmid, typ, user, source string
	errorsOnly                    bool
	since, until                  int64
	status                        map[string]bool
}

func readTaskFilter(c *reqCtx) taskFilter {
	f := taskFilter{node: c.node, vmid: c.str("vmid"), typ: c.str("typefilter"), user: c.str("userfilter"),
		source: c.str("source"), errorsOnly: c.boolean("errors"), since: 0, until: math.MaxInt64, status: map[string]bool{}}
	if f.source == "" {
		f.source = "archive"
	}
	if c.has("since") {
		f.since = int64(c.integer("since"))
	}
	if c.has("until") {
		f.until = int64(c.integer("until"))
	}
	for _, x := range splitList(c.str("statusfilter")) {
		f.status[strings.ToLower(x)] = true
	}
	return f
}

// statusClass is a task's class for the status filter: running, ok, warning or error.
func statusClass(t *task) string {
	switch {
	case t.running:
		return "running"
	case strings.HasPrefix(t.exit, "WARNINGS"):
		return "warning"
	case t.exit != "OK":
		return "error"
	}
	return "ok"
}

func (f taskFilter) matches(t *task) bool {
	switch {
	case t.node != f.node,
		f.source == "active" && !t.running, f.source == "archive" && t.running,
		f.vmid != "" && t.id != f.vmid,
		f.typ != "" && t.typ != f.typ,
		f.user != "" && !strings.Contains(t.user, f.user),
		t.starttime < f.since || t.starttime > f.until,
		f.errorsOnly && (t.running || t.exit == "OK"):
		return false
	}
	return len(f.status) == 0 || f.status[statusClass(t)]
}

func (s *Sim) hTaskList(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f := readTaskFilter(c)
	start, limit := c.integer("start"), 50
	if c.has("limit") {
		limit = c.integer("limit")
	}
	var sel []*task
	for _, t := range s.taskList {
		if f.matches(t) {
			sel = append(sel, t)
		}
	}
	sort.SliceStable(sel, func(i, j int) bool { return sel[i].starttime > sel[j].starttime })
	out := []map[string]any{}
	for i := start; i < len(sel) && len(out) < limit; i++ {
		t := sel[i]
		m := map[string]any{"upid": t.upid, "node": t.node, "pid": t.pid, "pstart": t.pstart, "starttime": t.starttime,
			"type": t.typ, "id": t.id, "user": t.user}
		if !t.running {
			m["status"] = t.exit
			m["endtime"] = t.endtime
		}
		out = append(out, m)
	}
	return withTotal{data: out, total: len(sel)}, nil
}

// SetTaskDuration sets how long tasks of a type (e.g. "vzcreate") run; "" sets the default.
func (s *Sim) SetTaskDuration(taskType string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if taskType == "" {
		s.opts.TaskDuration = d
		return
	}
	s.taskDur[taskType] = d
}
