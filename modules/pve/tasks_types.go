package pve

// TaskStatus is GET /nodes/{node}/tasks/{upid}/status. ExitStatus is only
// present once Status is "stopped"; the endpoint has no end time.
type TaskStatus struct {
	UPID       string `json:"upid"`
	Node       string `json:"node"`
	PID        Int    `json:"pid"`
	PStart     Int    `json:"pstart"`
	StartTime  Int    `json:"starttime"`
	Type       string `json:"type"`
	ID         string `json:"id"`
	User       string `json:"user"`
	TokenID    string `json:"tokenid,omitempty"`
	Status     string `json:"status"`
	ExitStatus string `json:"exitstatus,omitempty"`
}

// Running reports whether the task has not stopped yet.
func (s TaskStatus) Running() bool { return s.Status != "stopped" }

// TaskLogLine is one line of GET /nodes/{node}/tasks/{upid}/log.
type TaskLogLine struct {
	N Int    `json:"n"`
	T string `json:"t"`
}

// TaskResult is the outcome of a finished task (R11). OK is true for the
// exit statuses "OK" and "WARNINGS: n" (Warnings holds n); anything else is a
// failure, returned as a [*TaskError]. LogTail holds the last lines of the
// task log when the task failed or warned.
type TaskResult struct {
	UPID       string
	Node       string
	Type       string
	ExitStatus string
	Warnings   int
	OK         bool
	LogTail    []string
}
