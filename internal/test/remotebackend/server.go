package remotebackend

import (
	"context"
	"net"
	"net/rpc"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// changesWait is how long a Changes call waits for a change before it returns none.
const changesWait = 30 * time.Second

// Service is a backend served over net/rpc (see Serve).
type Service struct {
	b backend.Backend

	mu      sync.Mutex
	pending map[types.NamespacedName]struct{}
	wake    chan struct{}
}

// Serve serves b on l until l is closed (it returns the error of l.Accept): every method of backend.Backend, and the backend's change
// notifications, which a Client collects with long-polling Changes calls.
func Serve(l net.Listener, b backend.Backend) error {
	s := &Service{b: b, pending: map[types.NamespacedName]struct{}{}, wake: make(chan struct{}, 1)}
	b.OnChange(s.notify)
	srv := rpc.NewServer()
	if err := srv.RegisterName(serviceName, s); err != nil {
		return err
	}
	for {
		conn, err := l.Accept()
		if err != nil {
			return err
		}
		go srv.ServeConn(conn)
	}
}

const serviceName = "Backend"

func (s *Service) notify(key types.NamespacedName) {
	s.mu.Lock()
	s.pending[key] = struct{}{}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// EnsureCluster serves backend.Backend.EnsureCluster.
func (s *Service) EnsureCluster(args ClusterArgs, reply *ClusterReply) error {
	certs, err := decodeCerts(args.Certs)
	if err != nil {
		reply.Err = toWire(err)
		return nil
	}
	st, err := s.b.EnsureCluster(context.Background(), backend.Cluster{Key: args.Key, ClusterName: args.ClusterName,
		Port: args.Port, Certificates: certs, DataDir: args.DataDir})
	reply.Status, reply.Err = st, toWire(err)
	return nil
}

// StoredCertificates serves backend.Backend.StoredCertificates.
func (s *Service) StoredCertificates(args KeyArgs, reply *CertsReply) error {
	c, err := s.b.StoredCertificates(args.Key)
	if err == nil {
		reply.Certs, err = encodeCerts(c)
	}
	reply.Err = toWire(err)
	return nil
}

// DeleteCluster serves backend.Backend.DeleteCluster.
func (s *Service) DeleteCluster(args KeyArgs, reply *ErrReply) error {
	reply.Err = toWire(s.b.DeleteCluster(context.Background(), args.Key))
	return nil
}

// ReleaseCluster serves backend.Backend.ReleaseCluster.
func (s *Service) ReleaseCluster(args KeyArgs, reply *ErrReply) error {
	reply.Err = toWire(s.b.ReleaseCluster(context.Background(), args.Key))
	return nil
}

// EnsureMachine serves backend.Backend.EnsureMachine.
func (s *Service) EnsureMachine(args MachineArgs, reply *MachineReply) error {
	st, err := s.b.EnsureMachine(context.Background(), args.Key, args.Machine)
	reply.Status, reply.Err = st, toWire(err)
	return nil
}

// Machines serves backend.Backend.Machines.
func (s *Service) Machines(args KeyArgs, reply *NamesReply) error {
	names, err := s.b.Machines(context.Background(), args.Key)
	reply.Names, reply.Err = names, toWire(err)
	return nil
}

// DeleteMachine serves backend.Backend.DeleteMachine.
func (s *Service) DeleteMachine(args DeleteMachineArgs, reply *ErrReply) error {
	reply.Err = toWire(s.b.DeleteMachine(context.Background(), args.Key, args.Name))
	return nil
}

// ClusterConfiguration serves backend.Backend.ClusterConfiguration.
func (s *Service) ClusterConfiguration(args KeyArgs, reply *BytesReply) error {
	data, err := s.b.ClusterConfiguration(context.Background(), args.Key)
	reply.Data, reply.Err = data, toWire(err)
	return nil
}

// Changes returns the clusters whose state changed since the last call, waiting up to changesWait for
// one.
func (s *Service) Changes(_ struct{}, reply *[]types.NamespacedName) error {
	s.mu.Lock()
	empty := len(s.pending) == 0
	s.mu.Unlock()
	if empty {
		select {
		case <-s.wake:
		case <-time.After(changesWait):
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.pending {
		*reply = append(*reply, k)
	}
	clear(s.pending)
	return nil
}
