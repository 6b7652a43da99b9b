package memory

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
)

// etcdClientPort is the port of an etcd Pod a control plane provider forwards to.
const etcdClientPort = 2379

// apiServerPort is the port of a kube-apiserver Pod.
const apiServerPort = 6443

// apiServerAddr is the address of a connection to one machine's API server, through a port-forward.
type apiServerAddr struct {
	cluster *cluster
	node    string
}

func (a apiServerAddr) Network() string { return "portforward" }
func (a apiServerAddr) String() string  { return a.cluster.key.String() + "/kube-apiserver-" + a.node }

// etcdVersion is the version the simulated members report.
const etcdVersion = "3.5.21"

// member is an etcd member of a workload cluster: one per control plane machine, named after its Node.
type member struct {
	id   uint64
	name string
}

func memberID(cluster types.NamespacedName, node string) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, cluster.String()+"/"+node)
	if id := h.Sum64(); id != 0 {
		return id
	}
	return 1
}

// etcdServer answers the etcd API a control plane provider uses — member list, add, remove and
// promote, status, move-leader and alarms — for every workload cluster; which cluster and member a call
// is for is the peer address of its connection (memberAddr), set when the port-forward was opened.
type etcdServer struct {
	pb.UnimplementedClusterServer
	pb.UnimplementedMaintenanceServer
	grpc *grpc.Server
	lis  *connListener
}

func newEtcdServer() *etcdServer {
	s := &etcdServer{grpc: grpc.NewServer(), lis: newConnListener()}
	pb.RegisterClusterServer(s.grpc, s)
	pb.RegisterMaintenanceServer(s.grpc, s)
	go func() { _ = s.grpc.Serve(s.lis) }()
	return s
}

func (s *etcdServer) stop() { s.grpc.Stop() }

// memberAddr is the address of a connection to a member of a cluster.
type memberAddr struct {
	cluster *cluster
	node    string
}

func (a memberAddr) Network() string { return "portforward" }
func (a memberAddr) String() string  { return a.cluster.key.String() + "/etcd-" + a.node }

// target is the member a call is for: the peer address of its connection.
func target(ctx context.Context) (memberAddr, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return memberAddr{}, status.Error(codes.Internal, "no peer")
	}
	a, ok := p.Addr.(memberAddr)
	if !ok {
		return memberAddr{}, status.Error(codes.Internal, "unknown peer")
	}
	return a, nil
}

// id is the member's ID.
func (a memberAddr) id() uint64 { return memberID(a.cluster.key, a.node) }

// header is the header of the member's responses.
func (a memberAddr) header() *pb.ResponseHeader {
	return &pb.ResponseHeader{ClusterId: memberID(a.cluster.key, ""), MemberId: a.id(), Revision: 1, RaftTerm: 2}
}

func (s *etcdServer) MemberList(ctx context.Context, _ *pb.MemberListRequest) (*pb.MemberListResponse, error) {
	m, err := target(ctx)
	if err != nil {
		return nil, err
	}
	out := &pb.MemberListResponse{Header: m.header()}
	for _, e := range m.cluster.etcdMembers() {
		out.Members = append(out.Members, &pb.Member{ID: e.id, Name: e.name,
			PeerURLs: []string{"https://" + e.name + ":2380"}, ClientURLs: []string{"https://" + e.name + ":2379"}})
	}
	return out, nil
}

func (s *etcdServer) MemberAdd(ctx context.Context, req *pb.MemberAddRequest) (*pb.MemberAddResponse, error) {
	return nil, status.Error(codes.Unimplemented, "the memory backend adds a member when its control plane machine starts")
}

func (s *etcdServer) MemberRemove(ctx context.Context, req *pb.MemberRemoveRequest) (*pb.MemberRemoveResponse, error) {
	m, err := target(ctx)
	if err != nil {
		return nil, err
	}
	if !m.cluster.removeEtcdMember(req.ID) {
		return nil, rpctypes.ErrGRPCMemberNotFound
	}
	return &pb.MemberRemoveResponse{Header: m.header()}, nil
}

func (s *etcdServer) MemberPromote(ctx context.Context, req *pb.MemberPromoteRequest) (*pb.MemberPromoteResponse, error) {
	m, err := target(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.MemberPromoteResponse{Header: m.header()}, nil
}

func (s *etcdServer) Status(ctx context.Context, _ *pb.StatusRequest) (*pb.StatusResponse, error) {
	m, err := target(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.StatusResponse{Header: m.header(), Version: etcdVersion, Leader: m.cluster.etcdLeader(), RaftIndex: 1,
		RaftTerm: 2, RaftAppliedIndex: 1, StorageVersion: "3.5.0", DbSize: 1 << 20, DbSizeInUse: 1 << 20}, nil
}

func (s *etcdServer) MoveLeader(ctx context.Context, req *pb.MoveLeaderRequest) (*pb.MoveLeaderResponse, error) {
	m, err := target(ctx)
	if err != nil {
		return nil, err
	}
	if m.cluster.etcdLeader() != m.id() {
		return nil, rpctypes.ErrGRPCNotLeader
	}
	if !m.cluster.moveEtcdLeader(req.TargetID) {
		return nil, rpctypes.ErrGRPCBadLeaderTransferee
	}
	return &pb.MoveLeaderResponse{Header: m.header()}, nil
}

func (s *etcdServer) Alarm(ctx context.Context, req *pb.AlarmRequest) (*pb.AlarmResponse, error) {
	m, err := target(ctx)
	if err != nil {
		return nil, err
	}
	// The simulated members never raise an alarm.
	return &pb.AlarmResponse{Header: m.header()}, nil
}

// portForward serves `pods/<pod>/portforward` of the workload API: port 2379 of an etcd Pod reaches the
// simulated etcd member of its Node, over TLS with a serving certificate of the cluster's etcd CA and
// client certificates of the same CA, as a real member.
func (c *cluster) portForward(w http.ResponseWriter, r *http.Request, namespace, pod string) {
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	portforward.ServePortForward(w, r, forwarder{c: c, namespace: namespace}, pod, "", opts, 4*time.Hour, 30*time.Second, portforward.SupportedProtocols)
}

type forwarder struct {
	c         *cluster
	namespace string
}

func (f forwarder) PortForward(ctx context.Context, pod, _ string, port int32, stream io.ReadWriteCloser) error {
	defer func() { _ = stream.Close() }()
	if _, err := f.c.store.get(podsResource, f.namespace, pod); err != nil {
		return fmt.Errorf("pod %s/%s: %w", f.namespace, pod, err)
	}
	if node, ok := strings.CutPrefix(pod, "kube-apiserver-"); ok && f.namespace == "kube-system" && port == apiServerPort {
		// The machine's own API server: the cluster's API, reporting the machine's version.
		conn := &streamConn{rwc: stream, local: apiServerAddr{cluster: f.c, node: node}, remote: apiServerAddr{cluster: f.c, node: node}, done: make(chan struct{})}
		if err := f.c.backend.apiConns.push(tls.Server(conn, f.c.tlsConfig)); err != nil {
			return err
		}
		select {
		case <-conn.done:
		case <-ctx.Done():
		case <-f.c.done:
		}
		return nil
	}
	node, ok := strings.CutPrefix(pod, "etcd-")
	if f.namespace != "kube-system" || !ok || port != etcdClientPort {
		return fmt.Errorf("the memory backend forwards only port %d of the etcd Pods and port %d of the kube-apiserver Pods of kube-system", etcdClientPort, apiServerPort)
	}
	cfg, err := f.c.etcdTLS(node)
	if err != nil {
		return err
	}
	conn := &streamConn{rwc: stream, local: memberAddr{cluster: f.c, node: node}, remote: memberAddr{cluster: f.c, node: node}, done: make(chan struct{})}
	tlsConn := tls.Server(conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tlsConn.HandshakeContext(hctx); err != nil {
		return fmt.Errorf("TLS handshake with the etcd client: %w", err)
	}
	if err := f.c.backend.etcd.lis.push(&peerConn{Conn: tlsConn, remote: conn.remote}); err != nil {
		return err
	}
	select {
	case <-conn.done:
	case <-ctx.Done():
	case <-f.c.done:
	}
	return nil
}

// peerConn is a connection whose peer address names the cluster and member it is for.
type peerConn struct {
	net.Conn
	remote net.Addr
}

func (p *peerConn) RemoteAddr() net.Addr { return p.remote }

// streamConn is a port-forward stream as a net.Conn.
type streamConn struct {
	rwc           io.ReadWriteCloser
	local, remote net.Addr
	once          sync.Once
	done          chan struct{}
}

func (s *streamConn) Read(b []byte) (int, error)  { return s.rwc.Read(b) }
func (s *streamConn) Write(b []byte) (int, error) { return s.rwc.Write(b) }
func (s *streamConn) Close() error {
	s.once.Do(func() { close(s.done) })
	return s.rwc.Close()
}
func (s *streamConn) LocalAddr() net.Addr              { return s.local }
func (s *streamConn) RemoteAddr() net.Addr             { return s.remote }
func (s *streamConn) SetDeadline(time.Time) error      { return nil }
func (s *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (s *streamConn) SetWriteDeadline(time.Time) error { return nil }

// connListener hands connections to a server.
type connListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) error {
	select {
	case l.conns <- c:
		return nil
	case <-l.closed:
		return errors.New("the etcd server stopped")
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.UnixAddr{Name: "memory", Net: "portforward"} }
