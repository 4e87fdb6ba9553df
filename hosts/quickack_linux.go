package hosts

import (
	"net"
	"syscall"
)

// tcpQuickAck is Linux's TCP_QUICKACK socket option.
const tcpQuickAck = 0xc

// quickAckConn acknowledges every TCP segment at once. sshd leaves Nagle's
// algorithm on for sessions without a pty, so after one small packet (a
// line of output, the wrapper's pid line) it holds back the next (the exit
// status) until the first is acknowledged — while Linux delays that
// acknowledgement by up to 40 ms, hoping to piggyback it. Each command
// then pays a needless 20–40 ms. TCP_QUICKACK is not sticky (the kernel
// may fall back to delayed ACKs), so it is set again after every read.
type quickAckConn struct {
	*net.TCPConn
	raw syscall.RawConn
}

// withQuickAck wraps a TCP connection; anything else is returned as is.
func withQuickAck(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	q := quickAckConn{tc, raw}
	q.quickAck()
	return q
}

func (c quickAckConn) Read(b []byte) (int, error) {
	n, err := c.TCPConn.Read(b)
	c.quickAck()
	return n, err
}

func (c quickAckConn) quickAck() {
	_ = c.raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpQuickAck, 1)
	})
}
