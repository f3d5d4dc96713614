package pvesim

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// The terminal behind a termproxy port, after pve-xtermjs's termproxy: the client first sends
// "<user>:<vncticket>\n" and gets "OK"; then "0:<len>:<data>" is input, "1:<cols>:<rows>:" a
// resize and "2" a keep-alive, while the output is raw terminal bytes. Behind it runs a tiny
// shell with a prompt that answers echo, hostname, uname and exit, and "command not found"
// to anything else. Messages are a byte stream: a frame may span WebSocket messages.

// serveTerminal runs the handshake and the shell until the client leaves or ctx ends.
func (s *Sim) serveTerminal(ctx context.Context, conn net.Conn, sess *consoleSession) {
	in := bufio.NewReader(conn)
	hello, err := in.ReadString('\n')
	if err != nil || hello != sess.user+":"+sess.ticket+"\n" {
		return // termproxy drops a client whose ticket does not verify
	}
	if _, err := io.WriteString(conn, "OK"); err != nil {
		return
	}
	sh := &simShell{s: s, vmid: sess.vmid, out: conn}
	if sh.prompt() != nil {
		return
	}
	for ctx.Err() == nil {
		data, err := readTermFrame(in)
		if err != nil || sh.feed(data) != nil {
			return
		}
	}
}

// readTermFrame reads one client frame and returns its input bytes (none for a resize or a
// keep-alive).
func readTermFrame(in *bufio.Reader) ([]byte, error) {
	typ, err := in.ReadByte()
	if err != nil {
		return nil, err
	}
	switch typ {
	case '2':
		return nil, nil
	case '1':
		for range 3 { // cols, rows and the closing colon
			if _, err := in.ReadString(':'); err != nil {
				return nil, err
			}
		}
		return nil, nil
	case '0':
		if b, err := in.ReadByte(); err != nil || b != ':' {
			return nil, fmt.Errorf("malformed input frame")
		}
		lenText, err := in.ReadString(':')
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(strings.TrimSuffix(lenText, ":"))
		if err != nil || n < 0 || n > 1<<20 {
			return nil, fmt.Errorf("malformed input length")
		}
		data := make([]byte, n)
		_, err = io.ReadFull(in, data)
		return data, err
	}
	return nil, fmt.Errorf("unknown frame type %q", typ)
}

// simShell is the shell of a container's terminal: it echoes what is typed and runs a line
// at Enter.
type simShell struct {
	s    *Sim
	vmid int
	out  io.Writer
	line []byte
}

func (sh *simShell) prompt() error {
	name, _ := sh.s.consoleGuest(sh.vmid)
	_, err := io.WriteString(sh.out, "root@"+name+":~# ")
	return err
}

// feed takes typed bytes: printable ones are echoed, backspace erases, Enter runs the line.
func (sh *simShell) feed(data []byte) error {
	var echo []byte
	for _, b := range data {
		switch {
		case b == '\r' || b == '\n':
			if _, err := sh.out.Write(append(echo, '\r', '\n')); err != nil {
				return err
			}
			echo = nil
			if err := sh.run(string(sh.line)); err != nil {
				return err
			}
			sh.line = sh.line[:0]
		case b == 0x7f || b == 0x08:
			if len(sh.line) > 0 {
				sh.line = sh.line[:len(sh.line)-1]
				echo = append(echo, '\b', ' ', '\b')
			}
		case b >= 0x20 && b < 0x7f:
			sh.line = append(sh.line, b)
			echo = append(echo, b)
		}
	}
	if len(echo) == 0 {
		return nil
	}
	_, err := sh.out.Write(echo)
	return err
}

// run answers one command line and prints the next prompt; "exit" ends the session.
func (sh *simShell) run(line string) error {
	args := strings.Fields(line)
	out := ""
	switch {
	case len(args) == 0:
	case args[0] == "exit":
		return io.EOF
	case args[0] == "echo":
		out = strings.Join(args[1:], " ") + "\r\n"
	case args[0] == "hostname":
		name, _ := sh.s.consoleGuest(sh.vmid)
		out = name + "\r\n"
	case args[0] == "uname":
		out = "Linux\r\n"
	default:
		out = "-bash: " + args[0] + ": command not found\r\n"
	}
	if out != "" {
		if _, err := io.WriteString(sh.out, out); err != nil {
			return err
		}
	}
	return sh.prompt()
}
