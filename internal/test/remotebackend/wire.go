package remotebackend

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// What goes over the wire (gob, net/rpc's encoding; net/rpc serves only methods of exported argument
// types): the backend's own types where gob encodes them as they are, PEM for the certificates. net/rpc
// drops the reply of a call that fails, so replies carry their error themselves.

// WireCerts are backend.Certificates in PEM.
type WireCerts struct {
	CACert, CAKey, EtcdCACert, EtcdCAKey, FrontProxyCACert, FrontProxyCAKey, ServiceAccountKey []byte
}

// ClusterArgs are EnsureCluster's.
type ClusterArgs struct {
	Key         types.NamespacedName
	ClusterName string
	Port        int32
	Certs       WireCerts
	DataDir     string
}

// KeyArgs name a cluster.
type KeyArgs struct{ Key types.NamespacedName }

// MachineArgs are EnsureMachine's.
type MachineArgs struct {
	Key     types.NamespacedName
	Machine backend.Machine
}

// DeleteMachineArgs are DeleteMachine's.
type DeleteMachineArgs struct {
	Key  types.NamespacedName
	Name string
}

// NamesReply is Machines'.
type NamesReply struct {
	Names []string
	Err   WireError
}

// WireError is a backend's error: its message, and whether it is backend.ErrClusterNotReady.
type WireError struct {
	Message  string
	NotReady bool
}

func toWire(err error) WireError {
	if err == nil {
		return WireError{}
	}
	return WireError{Message: err.Error(), NotReady: errors.Is(err, backend.ErrClusterNotReady)}
}

func (e WireError) err() error {
	switch {
	case e.NotReady:
		return backend.ErrClusterNotReady
	case e.Message != "":
		return errors.New(e.Message)
	}
	return nil
}

// ClusterReply is EnsureCluster's.
type ClusterReply struct {
	Status backend.ClusterStatus
	Err    WireError
}

// CertsReply is StoredCertificates'.
type CertsReply struct {
	Certs WireCerts
	Err   WireError
}

// MachineReply is EnsureMachine's.
type MachineReply struct {
	Status backend.MachineStatus
	Err    WireError
}

// BytesReply is ClusterConfiguration's.
type BytesReply struct {
	Data []byte
	Err  WireError
}

// ErrReply is the reply of a call that returns only an error.
type ErrReply struct{ Err WireError }

func encodePair(kp *pki.KeyPair) (cert, key []byte, err error) {
	if kp == nil {
		return nil, nil, nil
	}
	key, err = pki.EncodeKey(kp.Key)
	return kp.CertPEM(), key, err
}

func decodePair(cert, key []byte) (*pki.KeyPair, error) {
	if cert == nil {
		return nil, nil
	}
	return pki.Parse(cert, key)
}

func encodeCerts(c backend.Certificates) (WireCerts, error) {
	var w WireCerts
	var err error
	if w.CACert, w.CAKey, err = encodePair(c.CA); err != nil {
		return w, err
	}
	if w.EtcdCACert, w.EtcdCAKey, err = encodePair(c.EtcdCA); err != nil {
		return w, err
	}
	if w.FrontProxyCACert, w.FrontProxyCAKey, err = encodePair(c.FrontProxyCA); err != nil {
		return w, err
	}
	if c.ServiceAccountKey != nil {
		if w.ServiceAccountKey, err = pki.EncodeKey(c.ServiceAccountKey); err != nil {
			return w, err
		}
	}
	return w, nil
}

func decodeCerts(w WireCerts) (backend.Certificates, error) {
	var c backend.Certificates
	var err error
	if c.CA, err = decodePair(w.CACert, w.CAKey); err != nil {
		return c, err
	}
	if c.EtcdCA, err = decodePair(w.EtcdCACert, w.EtcdCAKey); err != nil {
		return c, err
	}
	if c.FrontProxyCA, err = decodePair(w.FrontProxyCACert, w.FrontProxyCAKey); err != nil {
		return c, err
	}
	if w.ServiceAccountKey != nil {
		if c.ServiceAccountKey, err = pki.ParseKey(w.ServiceAccountKey); err != nil {
			return c, err
		}
	}
	return c, nil
}
