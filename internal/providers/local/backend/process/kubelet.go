package process

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/cri-streaming/pkg/streaming/portforward"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
)

// kubelet is a simulated kubelet: the HTTPS server of a Node's kubelet API that kube-apiserver calls for
// `kubectl logs` (/containerLogs) and `kubectl port-forward` (/portForward) of the Node's static Pods,
// served by the provider. It serves with a certificate signed by the cluster CA (the API servers are
// started with --kubelet-certificate-authority) and accepts only client certificates signed by the
// cluster CA (the API servers' kubelet client certificate).
type kubelet struct {
	server   *http.Server
	listener net.Listener
	pods     func(namespace, name string) (staticPod, bool)
	log      logr.Logger
}

// staticPod is what the simulated kubelet knows of a static Pod: the log of its process and the ports it
// listens on (the Pod's container port -> the process's real port on 127.0.0.1).
type staticPod struct {
	container string
	logFile   string
	ports     map[int32]int
}

// startKubelet serves the kubelet API of nodeName on port.
func startKubelet(port int, nodeName string, ca *kubeconfig.CA, pods func(namespace, name string) (staticPod, bool), log logr.Logger) (*kubelet, error) {
	kp, err := ca.Sign(pki.CertConfig{
		CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"},
		DNSNames: []string{"localhost", nodeName}, IPs: loopbackIPs,
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, Validity: certValidity,
	})
	if err != nil {
		return nil, fmt.Errorf("issuing the kubelet serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, &portInUseError{port: port}
	}
	k := &kubelet{listener: l, pods: pods, log: log.WithValues("Node", nodeName)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", k.containerLogs)
	mux.HandleFunc("/portForward/{namespace}/{pod}", k.portForward)
	mux.HandleFunc("/portForward/{namespace}/{pod}/{uid}", k.portForward)
	k.server = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    pool,
			Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}},
		},
		ErrorLog: nil,
	}
	go func() {
		if err := k.server.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			k.log.Error(err, "The simulated kubelet stopped serving")
		}
	}()
	return k, nil
}

func (k *kubelet) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = k.server.Shutdown(ctx)
	_ = k.server.Close()
}

func (k *kubelet) pod(w http.ResponseWriter, r *http.Request) (staticPod, bool) {
	p, ok := k.pods(r.PathValue("namespace"), r.PathValue("pod"))
	if !ok {
		http.Error(w, fmt.Sprintf("pod %s/%s not found on this node: only its static pods run here", r.PathValue("namespace"), r.PathValue("pod")), http.StatusNotFound)
	}
	return p, ok
}

// containerLogs serves a static Pod's process log, with kubectl logs' tailLines, limitBytes and follow.
func (k *kubelet) containerLogs(w http.ResponseWriter, r *http.Request) {
	p, ok := k.pod(w, r)
	if !ok {
		return
	}
	if c := r.PathValue("container"); c != p.container {
		http.Error(w, fmt.Sprintf("container %s is not valid for pod %s", c, r.PathValue("pod")), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	if q.Get("previous") == "true" {
		http.Error(w, "previous terminated container logs are not kept: the log holds every run", http.StatusBadRequest)
		return
	}
	f, err := os.Open(p.logFile)
	if errors.Is(err, os.ErrNotExist) {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer func() { _ = f.Close() }()
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		if err := seekTail(f, n); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	var out io.Writer = w
	limit := int64(-1)
	if n, err := strconv.ParseInt(q.Get("limitBytes"), 10, 64); err == nil && n > 0 {
		limit = n
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	copied := int64(0)
	copyOnce := func() bool {
		var src io.Reader = f
		if limit >= 0 {
			src = io.LimitReader(f, limit-copied)
		}
		n, _ := io.Copy(out, src)
		copied += n
		if fl, ok := w.(http.Flusher); ok && n > 0 {
			fl.Flush()
		}
		return limit < 0 || copied < limit
	}
	if !copyOnce() || q.Get("follow") != "true" {
		return
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
			if !copyOnce() {
				return
			}
		}
	}
}

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if n == 0 {
		_, err := f.Seek(0, io.SeekEnd)
		return err
	}
	// Count line starts from the beginning: the logs are bounded (maxLogSize).
	var offsets []int64
	r := bufio.NewReader(f)
	pos := int64(0)
	for pos < info.Size() {
		offsets = append(offsets, pos)
		line, err := r.ReadString('\n')
		pos += int64(len(line))
		if err != nil {
			break
		}
	}
	start := int64(0)
	if len(offsets) > n {
		start = offsets[len(offsets)-n]
	}
	_, err = f.Seek(start, io.SeekStart)
	return err
}

// portForward forwards the streams of `kubectl port-forward` (SPDY or WebSocket, as kube-apiserver
// relays them) to the ports of a static Pod's process.
func (k *kubelet) portForward(w http.ResponseWriter, r *http.Request) {
	p, ok := k.pod(w, r)
	if !ok {
		return
	}
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	portforward.ServePortForward(w, r, forwarder{pod: p}, r.PathValue("pod"), r.PathValue("uid"), opts,
		4*time.Hour, 30*time.Second, portforward.SupportedProtocols)
}

// forwarder connects a port-forward stream to a static Pod's process.
type forwarder struct{ pod staticPod }

func (f forwarder) PortForward(ctx context.Context, name, _ string, port int32, stream io.ReadWriteCloser) error {
	defer func() { _ = stream.Close() }()
	target, ok := f.pod.ports[port]
	if !ok {
		return fmt.Errorf("pod %s does not listen on port %d", name, port)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(target)))
	if err != nil {
		return fmt.Errorf("connecting to port %d of pod %s: %w", port, name, err)
	}
	defer func() { _ = conn.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, stream); done <- struct{}{} }()
	go func() { _, _ = io.Copy(stream, conn); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}
