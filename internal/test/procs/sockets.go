package procs

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Listener is a TCP socket in the LISTEN state and the process that holds it.
type Listener struct {
	Addr    net.TCPAddr
	Pid     int
	Cmdline string
}

func (l Listener) String() string {
	return fmt.Sprintf("%s (pid %d: %s)", l.Addr.String(), l.Pid, l.Cmdline)
}

// Listeners returns the listening TCP sockets (IPv4 and IPv6, /proc/net/tcp and /proc/net/tcp6) held by
// the processes pids.
func Listeners(pids []int) ([]Listener, error) {
	owner := map[string]int{} // socket inode -> pid
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone meanwhile
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil {
				continue
			}
			if inode, ok := strings.CutPrefix(target, "socket:["); ok {
				owner[strings.TrimSuffix(inode, "]")] = pid
			}
		}
	}
	var out []Listener
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		entries, err := readTCPTable(table)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			pid, ok := owner[e.inode]
			if !ok || e.state != tcpListen {
				continue
			}
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			out = append(out, Listener{Addr: e.addr, Pid: pid, Cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))})
		}
	}
	return out, nil
}

// tcpListen is the LISTEN state in /proc/net/tcp.
const tcpListen = "0A"

type tcpEntry struct {
	addr  net.TCPAddr
	state string
	inode string
}

// readTCPTable parses /proc/net/tcp or /proc/net/tcp6: "sl local_address rem_address st ... inode ...".
func readTCPTable(path string) ([]tcpEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []tcpEntry
	s := bufio.NewScanner(f)
	s.Scan() // the header
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 10 {
			continue
		}
		addr, err := parseProcAddr(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, tcpEntry{addr: addr, state: fields[3], inode: fields[9]})
	}
	return out, s.Err()
}

// parseProcAddr parses an address of /proc/net/tcp{,6}: the IP as 32-bit words in host (little-endian)
// order, in hex, a colon, and the port in hex.
func parseProcAddr(s string) (net.TCPAddr, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return net.TCPAddr{}, fmt.Errorf("address %q has no port", s)
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return net.TCPAddr{}, fmt.Errorf("address %q is not an IP", s)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return net.TCPAddr{}, fmt.Errorf("address %q has no valid port", s)
	}
	return net.TCPAddr{IP: ip, Port: int(port)}, nil
}
