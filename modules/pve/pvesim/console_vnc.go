package pvesim

import (
	"bufio"
	"context"
	"crypto/des"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"io"
	"math/bits"
	"net"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The screen behind a vncproxy port: an RFB 3.8 server (RFC 6143) offering only VNC
// authentication, whose password is the vncticket (as with qemu-server's vncproxy). The
// framebuffer is ConsoleWidth×ConsoleHeight of ConsoleBackground with the guest's name drawn
// in ConsoleForeground; it is sent raw-encoded, once per non-incremental update request (an
// incremental request is held, as nothing changes).

// The simulated screen.
const (
	ConsoleWidth  = 640
	ConsoleHeight = 400
)

// ConsoleBackground and ConsoleForeground are the colours of the simulated screen.
var (
	ConsoleBackground = color.RGBA{R: 0x1d, G: 0x4e, B: 0x89, A: 0xff}
	ConsoleForeground = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
)

// pixelFormat is an RFB PIXEL_FORMAT (true colour only).
type pixelFormat struct {
	bpp                    uint8
	bigEndian              bool
	rMax, gMax, bMax       uint16
	rShift, gShift, bShift uint8
}

var serverPixelFormat = pixelFormat{bpp: 32, rMax: 255, gMax: 255, bMax: 255, rShift: 16, gShift: 8}

func (pf pixelFormat) bytes() []byte {
	b := make([]byte, 16)
	b[0], b[1] = pf.bpp, 24
	if pf.bigEndian {
		b[2] = 1
	}
	b[3] = 1 // true colour
	binary.BigEndian.PutUint16(b[4:], pf.rMax)
	binary.BigEndian.PutUint16(b[6:], pf.gMax)
	binary.BigEndian.PutUint16(b[8:], pf.bMax)
	b[10], b[11], b[12] = pf.rShift, pf.gShift, pf.bShift
	return b
}

func parsePixelFormat(b []byte) pixelFormat {
	return pixelFormat{bpp: b[0], bigEndian: b[2] != 0, rMax: binary.BigEndian.Uint16(b[4:]),
		gMax: binary.BigEndian.Uint16(b[6:]), bMax: binary.BigEndian.Uint16(b[8:]),
		rShift: b[10], gShift: b[11], bShift: b[12]}
}

// put appends one pixel of c in the format.
func (pf pixelFormat) put(dst []byte, c color.RGBA) []byte {
	v := uint32(c.R)*uint32(pf.rMax)/255<<pf.rShift | uint32(c.G)*uint32(pf.gMax)/255<<pf.gShift |
		uint32(c.B)*uint32(pf.bMax)/255<<pf.bShift
	n := int(pf.bpp) / 8
	for i := range n {
		shift := 8 * i // little-endian: least significant byte first
		if pf.bigEndian {
			shift = 8 * (n - 1 - i)
		}
		dst = append(dst, byte(v>>shift))
	}
	return dst
}

// consoleScreen draws the guest's name on the background, as large as fits.
func consoleScreen(name string) *image.RGBA {
	face := basicfont.Face7x13
	small := image.NewRGBA(image.Rect(0, 0, ConsoleWidth, ConsoleHeight))
	draw.Draw(small, small.Bounds(), image.NewUniform(ConsoleBackground), image.Point{}, draw.Src)
	textW := font.MeasureString(face, name).Ceil()
	scale := 4
	for scale > 1 && textW*scale > ConsoleWidth-40 {
		scale--
	}
	w, h := ConsoleWidth/scale, ConsoleHeight/scale
	d := &font.Drawer{Dst: small, Src: image.NewUniform(ConsoleForeground), Face: face,
		Dot: fixed.P((w-textW)/2, (h+face.Ascent)/2)}
	d.DrawString(name)
	screen := image.NewRGBA(image.Rect(0, 0, ConsoleWidth, ConsoleHeight))
	draw.NearestNeighbor.Scale(screen, screen.Bounds(), small, image.Rect(0, 0, w, h), draw.Src, nil)
	return screen
}

// vncResponse is the DES encryption of a VNC challenge with the password as key: its first
// eight bytes, each with its bits reversed (RFC 6143 §7.2.2 as VNC servers implement it).
func vncResponse(password string, challenge []byte) []byte {
	key := make([]byte, 8)
	copy(key, password)
	for i, b := range key {
		key[i] = bits.Reverse8(b)
	}
	block, _ := des.NewCipher(key) // an 8-byte key never fails
	out := make([]byte, 16)
	block.Encrypt(out[:8], challenge[:8])
	block.Encrypt(out[8:], challenge[8:16])
	return out
}

// serveRFB runs the RFB handshake and then answers the client's messages.
func (s *Sim) serveRFB(ctx context.Context, conn net.Conn, sess *consoleSession) {
	in := bufio.NewReader(conn)
	if rfbHandshake(conn, in, sess.ticket) != nil {
		return
	}
	if _, err := in.ReadByte(); err != nil { // ClientInit: the shared flag
		return
	}
	name, _ := s.consoleGuest(sess.vmid)
	init := binary.BigEndian.AppendUint16(nil, ConsoleWidth)
	init = binary.BigEndian.AppendUint16(init, ConsoleHeight)
	init = append(init, serverPixelFormat.bytes()...)
	init = binary.BigEndian.AppendUint32(init, uint32(len(name)))
	if _, err := conn.Write(append(init, name...)); err != nil {
		return
	}
	rs := &rfbSession{out: conn, in: in, pf: serverPixelFormat, screen: consoleScreen(name)}
	for ctx.Err() == nil {
		if rs.message() != nil {
			return
		}
	}
}

// rfbHandshake is the version exchange and VNC authentication with password.
func rfbHandshake(conn net.Conn, in *bufio.Reader, password string) error {
	if _, err := io.WriteString(conn, "RFB 003.008\n"); err != nil {
		return err
	}
	version := make([]byte, 12)
	if _, err := io.ReadFull(in, version); err != nil {
		return err
	}
	if _, err := conn.Write([]byte{1, 2}); err != nil { // one security type: VNC authentication
		return err
	}
	if t, err := in.ReadByte(); err != nil || t != 2 {
		return fmt.Errorf("security type %d refused", t)
	}
	challenge := make([]byte, 16)
	_, _ = rand.Read(challenge) // crypto/rand.Read never fails
	if _, err := conn.Write(challenge); err != nil {
		return err
	}
	resp := make([]byte, 16)
	if _, err := io.ReadFull(in, resp); err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(resp, vncResponse(password, challenge)) != 1 {
		reason := "Authentication failed"
		msg := binary.BigEndian.AppendUint32([]byte{0, 0, 0, 1}, uint32(len(reason)))
		_, _ = conn.Write(append(msg, reason...)) // the session ends either way
		return fmt.Errorf("authentication failed")
	}
	_, err := conn.Write([]byte{0, 0, 0, 0})
	return err
}

// rfbSession is a connected RFB client.
type rfbSession struct {
	out    io.Writer
	in     *bufio.Reader
	pf     pixelFormat
	screen *image.RGBA
}

// rfbSkip is the length of each client message the server reads past (after its type).
var rfbSkip = map[byte]int{4: 7, 5: 5}

// message reads and answers one client message.
func (rs *rfbSession) message() error {
	typ, err := rs.in.ReadByte()
	if err != nil {
		return err
	}
	switch typ {
	case 0: // SetPixelFormat
		b := make([]byte, 19)
		if _, err := io.ReadFull(rs.in, b); err != nil {
			return err
		}
		rs.pf = parsePixelFormat(b[3:])
		if rs.pf.bpp != 8 && rs.pf.bpp != 16 && rs.pf.bpp != 32 {
			return fmt.Errorf("unsupported pixel format")
		}
		return nil
	case 2: // SetEncodings: raw is always allowed
		b := make([]byte, 3)
		if _, err := io.ReadFull(rs.in, b); err != nil {
			return err
		}
		_, err := rs.in.Discard(4 * int(binary.BigEndian.Uint16(b[1:])))
		return err
	case 3:
		return rs.update()
	case 6: // ClientCutText
		b := make([]byte, 7)
		if _, err := io.ReadFull(rs.in, b); err != nil {
			return err
		}
		_, err := rs.in.Discard(int(binary.BigEndian.Uint32(b[3:])))
		return err
	}
	if n, ok := rfbSkip[typ]; ok { // KeyEvent, PointerEvent
		_, err := rs.in.Discard(n)
		return err
	}
	return fmt.Errorf("unknown client message %d", typ)
}

// update answers a FramebufferUpdateRequest: a non-incremental one gets the requested
// rectangle, raw-encoded.
func (rs *rfbSession) update() error {
	b := make([]byte, 9)
	if _, err := io.ReadFull(rs.in, b); err != nil {
		return err
	}
	if b[0] != 0 {
		return nil
	}
	r := image.Rect(int(binary.BigEndian.Uint16(b[1:])), int(binary.BigEndian.Uint16(b[3:])), 0, 0)
	r.Max = r.Min.Add(image.Pt(int(binary.BigEndian.Uint16(b[5:])), int(binary.BigEndian.Uint16(b[7:]))))
	r = r.Intersect(rs.screen.Bounds())
	msg := []byte{0, 0, 0, 1} // FramebufferUpdate, one rectangle
	for _, v := range []int{r.Min.X, r.Min.Y, r.Dx(), r.Dy()} {
		msg = binary.BigEndian.AppendUint16(msg, uint16(v))
	}
	msg = binary.BigEndian.AppendUint32(msg, 0) // raw
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			msg = rs.pf.put(msg, rs.screen.RGBAAt(x, y))
		}
	}
	_, err := rs.out.Write(msg)
	return err
}
