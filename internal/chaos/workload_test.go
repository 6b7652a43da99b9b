package chaos

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/test/etcdtest"
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

// workloadCluster is what the suite knows of one workload cluster: how to reach its API through its
// endpoint and its etcd members directly, where the local provider keeps its data, and the data written to
// it.
type workloadCluster struct {
	ns, name string
	api      kubernetes.Interface
	etcdTLS  *tls.Config

	mu sync.Mutex
	// dataDir is where the local provider keeps the cluster's data (it changes when the cluster moves to
	// another management cluster).
	dataDir string
	data    map[string]string // ConfigMaps of namespace default written by the suite: name → value
}

func (w *workloadCluster) dir() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dataDir
}

// readDataDir reads where the cluster's LocalCluster says its data is, in the management cluster of c.
func (w *workloadCluster) readDataDir(ctx context.Context, c client.Client) error {
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, key(w.ns, w.name), cluster); err != nil {
		return err
	}
	if cluster.Spec.InfrastructureRef == nil {
		return fmt.Errorf("cluster %s has no infrastructure", w.name)
	}
	lc := &infrav1.LocalCluster{}
	if err := c.Get(ctx, key(w.ns, cluster.Spec.InfrastructureRef.Name), lc); err != nil {
		return err
	}
	dir := lc.Annotations[infrav1.DataDirAnnotation]
	if dir == "" {
		return fmt.Errorf("LocalCluster %s does not say where its data is (%s)", lc.Name, infrav1.DataDirAnnotation)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dataDir = dir
	return nil
}

// connect builds the clients of a Cluster that is Available: its admin client from its CA Secret, an etcd
// client certificate of its etcd CA, and its data directory from its LocalCluster.
func connect(ctx context.Context, c client.Client, ns, name string) (*workloadCluster, error) {
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, key(ns, name), cluster); err != nil {
		return nil, err
	}
	cfg, err := testworkload.FromCA(ctx, c, ns, name, cluster.Spec.ControlPlaneEndpoint)
	if err != nil {
		return nil, err
	}
	// A sample every 200 ms, each retried by client-go on a connection reset: not throttled. A read must
	// be answered within apiReadTimeout.
	cfg.Timeout, cfg.QPS, cfg.Burst = apiReadTimeout, 100, 200
	w := &workloadCluster{ns: ns, name: name, api: kubernetes.NewForConfigOrDie(cfg), data: map[string]string{}}

	secret := &corev1.Secret{}
	if err := c.Get(ctx, key(ns, clustersecret.Name(name, clustersecret.EtcdCA)), secret); err != nil {
		return nil, err
	}
	ca, err := pki.Parse(secret.Data[clustersecret.CertKey], secret.Data[clustersecret.KeyKey])
	if err != nil {
		return nil, err
	}
	kp, err := ca.Sign(pki.CertConfig{CommonName: "capstan-chaos", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(kp.CertPEM(), kp.KeyPEM())
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(secret.Data[clustersecret.CertKey])
	w.etcdTLS = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{pair}}

	if err := w.readDataDir(ctx, c); err != nil {
		return nil, err
	}
	return w, nil
}

// write writes a ConfigMap to the workload cluster, to find it again after the faults.
func (w *workloadCluster) write(ctx context.Context, name string) error {
	value := strconv.FormatInt(time.Now().UnixNano(), 36)
	_, err := w.api.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"value": value}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s to cluster %s: %w", name, w.name, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.data[name] = value
	return nil
}

// firstData returns the name of the first ConfigMap written, "" when none.
func (w *workloadCluster) firstData() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.data))
	for n := range w.data {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// checkData reads back every ConfigMap written.
func (w *workloadCluster) checkData(ctx context.Context) error {
	w.mu.Lock()
	data := make(map[string]string, len(w.data))
	for k, v := range w.data {
		data[k] = v
	}
	w.mu.Unlock()
	for name, value := range data {
		cm, err := w.api.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading ConfigMap %s written before the faults: %w", name, err)
		}
		if cm.Data["value"] != value {
			return fmt.Errorf("ConfigMap %s written before the faults holds %q, not %q", name, cm.Data["value"], value)
		}
	}
	return nil
}

// backendState is the part of the process backend's state.json the suite reads.
type backendState struct {
	Machines map[string]struct {
		ControlPlane   bool `json:"controlPlane"`
		EtcdClientPort int  `json:"etcdClientPort"`
	} `json:"machines"`
}

func (w *workloadCluster) state() (backendState, error) {
	var st backendState
	data, err := os.ReadFile(filepath.Join(w.dir(), "state.json"))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// etcdHealth lists the etcd members through those the backend knows of — a linearizable read, which
// answers only while a quorum of voting members does: an error means no quorum — and asks each voting
// member for its status: it returns how many voting members answer (on a loaded machine a live member may
// answer slower than the timeout), how many there are, and how long the member list took.
func (w *workloadCluster) etcdHealth(ctx context.Context) (healthy, voting int, answered map[string]bool, listed time.Duration, err error) {
	st, err := w.state()
	if err != nil {
		return 0, 0, nil, 0, err
	}
	var endpoints []string
	for _, m := range st.Machines {
		if m.ControlPlane && m.EtcdClientPort != 0 {
			endpoints = append(endpoints, "https://127.0.0.1:"+strconv.Itoa(m.EtcdClientPort))
		}
	}
	if len(endpoints) == 0 {
		return 0, 0, nil, 0, fmt.Errorf("no etcd member in %s", w.dir())
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: w.etcdTLS, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 0, 0, nil, 0, err
	}
	defer func() { _ = cli.Close() }()
	p, err := etcdtest.ProbeMembers(ctx, cli, apiReadTimeout)
	if err != nil {
		return 0, 0, nil, 0, err
	}
	answered = map[string]bool{}
	for name, err := range p.Answered {
		answered[name] = err == nil
	}
	return p.Healthy(), p.Voting, answered, p.Listed, nil
}

// sampler checks a workload cluster's invariants every 200 ms while it runs: its API answers (a read of
// the first ConfigMap written, through the endpoint) and its etcd keeps quorum. Some faults take the
// workload cluster down with them (its processes die with the local provider, or with capstan up): from
// the fault until the API answers and etcd has quorum again the samples are excused, and that must happen
// within a bound. A step that replaces a cluster's only control plane Machine excuses the samples for the
// step.
type sampler struct {
	w *workloadCluster

	mu                      sync.Mutex
	apiSamples, apiFailures int
	slowestAPI, slowestEtcd time.Duration
	etcdSamples, etcdLosses int
	excusedFaults           int
	stepExcused             bool
	downSince, backAfter    time.Time
	downBy                  string
	downBound               time.Duration
	lastAPIOK, lastQuorumOK time.Time
	// minHealthy is the fewest voting members that answered their status call in a sample with quorum,
	// of votingAtMin.
	minHealthy, votingAtMin int
	// members are the answers of each voting member in the last samples (memberHistory), oldest first;
	// decided holds the control plane Machines whose deletion was judged (see watchDeletions).
	members                 []memberSample
	decided                 map[string]bool
	violations              []string
	cancel                  context.CancelFunc
	wg                      sync.WaitGroup
	outstandingAPI, outEtcd int
}

const (
	// apiReadTimeout is how long a read of the workload API may take, client-go's retries included (an
	// API server that hangs, its etcd member stopped, leaves the endpoint within 5.2 s, then client-go
	// retries on another after 1 s), and the linearizable read of the etcd members (across a change of
	// leader, when the leader's member stops, etcd itself gives a request 7 s; a quorum lost lasts).
	apiReadTimeout = 10 * time.Second
	sampleInterval = 200 * time.Millisecond
	// maxOutstanding bounds the samples waiting for an answer at once (a sample is started every 200 ms
	// whether or not the last one answered).
	maxOutstanding = 25
)

func startSampler(w *workloadCluster, mgmt func() client.Client) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{w: w, cancel: cancel, decided: map[string]bool{}}
	s.wg.Add(1)
	go s.watchDeletions(ctx, mgmt)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(sampleInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s.mu.Lock()
			api, etcd := s.outstandingAPI < maxOutstanding, s.outEtcd < maxOutstanding
			if api {
				s.outstandingAPI++
			}
			if etcd {
				s.outEtcd++
			}
			s.mu.Unlock()
			if api {
				s.wg.Add(1)
				go s.sampleAPI(ctx)
			}
			if etcd {
				s.wg.Add(1)
				go s.sampleEtcd(ctx)
			}
			s.checkDownBound()
		}
	}()
	return s
}

func (s *sampler) sampleAPI(ctx context.Context) {
	defer s.wg.Done()
	// A sample counts from when it started: one that began before a fault and was answered after it (a
	// retry) does not show the cluster back.
	started, excusedAtStart := time.Now(), s.isExcused()
	name := s.w.firstData()
	var err error
	if name == "" {
		_, err = s.w.api.Discovery().ServerVersion()
	} else {
		_, err = s.w.api.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
	}
	at := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outstandingAPI--
	if ctx.Err() != nil {
		return
	}
	s.apiSamples++
	if err == nil {
		s.lastAPIOK = started
		if !excusedAtStart && !s.excused() {
			// Only the samples that had to answer: one started while a fault excused failures may wait for
			// the cluster to come back.
			s.slowestAPI = max(s.slowestAPI, at.Sub(started))
		}
		s.maybeUp()
		return
	}
	if excusedAtStart || s.excused() {
		return
	}
	s.apiFailures++
	if apierrors.IsNotFound(err) {
		s.violate("%s: ConfigMap %s written before the faults is gone", at.Format(time.StampMilli), name)
		return
	}
	s.violate("%s: the workload API of cluster %s did not answer: %v", at.Format(time.StampMilli), s.w.name, err)
}

func (s *sampler) sampleEtcd(ctx context.Context) {
	defer s.wg.Done()
	started, excusedAtStart := time.Now(), s.isExcused()
	healthy, voting, answered, listed, err := s.w.etcdHealth(ctx)
	at := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outEtcd--
	for name, ok := range answered {
		s.members = append(s.members, memberSample{at: started, name: name, answered: ok})
	}
	if cut := slices.IndexFunc(s.members, func(m memberSample) bool { return started.Sub(m.at) < memberHistory }); cut > 0 {
		s.members = slices.Delete(s.members, 0, cut)
	}
	if ctx.Err() != nil {
		return
	}
	s.etcdSamples++
	if err == nil {
		s.lastQuorumOK = started
		if !excusedAtStart && !s.excused() {
			s.slowestEtcd = max(s.slowestEtcd, listed)
		}
		s.maybeUp()
		if voting > 0 && (s.minHealthy == 0 || healthy < s.minHealthy) {
			s.minHealthy, s.votingAtMin = healthy, voting
		}
		return
	}
	if excusedAtStart || s.excused() {
		return
	}
	s.etcdLosses++
	s.violate("%s: etcd of cluster %s has no quorum: %v", at.Format(time.StampMilli), s.w.name, err)
}

// memberSample is whether a voting member answered its status call in a sample started at at.
type memberSample struct {
	at       time.Time
	name     string
	answered bool
}

// memberHistory is how long member answers are kept, to judge the deletions of control plane Machines.
const memberHistory = 2 * time.Minute

// watchDeletions judges each deletion of one of the cluster's control plane Machines that the control
// plane provider decided (the Cluster is not being deleted): when it was made (metadata.deletionTimestamp,
// to the second), every other voting member must have answered — a Machine deleted while another member
// does not answer takes etcd one failure closer to losing quorum (a decision on a stale health read). A
// member that answered in no sample between 2 s before and 1 s after the deletion, and failed in some, did
// not answer.
func (s *sampler) watchDeletions(ctx context.Context, mgmt func() client.Client) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		c := mgmt()
		cluster := &clusterv1.Cluster{}
		if err := c.Get(ctx, key(s.w.ns, s.w.name), cluster); err != nil || !cluster.DeletionTimestamp.IsZero() {
			continue
		}
		machines := &clusterv1.MachineList{}
		if err := c.List(ctx, machines, client.InNamespace(s.w.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: s.w.name},
			client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
			continue
		}
		for _, m := range machines.Items {
			if m.DeletionTimestamp.IsZero() || s.decided[string(m.UID)] || time.Since(m.DeletionTimestamp.Time) < 3*time.Second {
				continue
			}
			s.decided[string(m.UID)] = true
			own := ""
			if m.Status.NodeRef != nil {
				own = m.Status.NodeRef.Name
			}
			s.judgeDeletion(m.Name, own, m.DeletionTimestamp.Time)
		}
	}
}

func (s *sampler) judgeDeletion(machine, own string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	from, to := at.Add(-2*time.Second), at.Add(2*time.Second) // deletionTimestamp is truncated to the second
	answered, failed := map[string]bool{}, map[string]bool{}
	for _, m := range s.members {
		if m.name == own || m.at.Before(from) || m.at.After(to) {
			continue
		}
		if m.answered {
			answered[m.name] = true
		} else {
			failed[m.name] = true
		}
	}
	for name := range failed {
		if !answered[name] {
			s.violate("%s: control plane Machine %s of cluster %s was deleted while etcd member %s did not answer",
				at.Format(time.StampMilli), machine, s.w.name, name)
		}
	}
}

// excused reports whether failures are expected now. Called with mu held. A sample is excused when it
// was at its start or is at its end: one started while the cluster was down may fail after it is back.
func (s *sampler) excused() bool { return s.stepExcused || !s.downSince.IsZero() }

func (s *sampler) isExcused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.excused()
}

// maybeUp ends a down period once the API answered and etcd had quorum in samples started after the
// fault was over (backAfter). Called with mu held.
func (s *sampler) maybeUp() {
	if !s.downSince.IsZero() && !s.backAfter.IsZero() && s.lastAPIOK.After(s.backAfter) && s.lastQuorumOK.After(s.backAfter) {
		s.downSince, s.backAfter = time.Time{}, time.Time{}
	}
}

func (s *sampler) checkDownBound() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.downSince.IsZero() && time.Since(s.downSince) > s.downBound {
		s.violate("the workload cluster %s did not come back (API answering, etcd quorum) within %s of %s", s.w.name, s.downBound, s.downBy)
		s.downSince = time.Now() // once per bound
	}
}

// down excuses the samples from now until the cluster is back, which must happen within bound. The
// cluster may still answer while the fault is being injected (capstan down stops it gracefully): only
// samples started after over is called show it back.
func (s *sampler) down(by string, bound time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.downSince, s.downBy, s.downBound, s.backAfter = time.Now(), by, bound, time.Time{}
	s.excusedFaults++
}

// over says the fault that took the cluster down is over (what it stopped was started again).
func (s *sampler) over() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.downSince.IsZero() {
		s.backAfter = time.Now()
	}
}

// excuseStep excuses the samples until it is called with false.
func (s *sampler) excuseStep(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stepExcused = on
}

// waitUp waits until a down period ended, up to timeout.
func (s *sampler) waitUp(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		up := s.downSince.IsZero()
		s.mu.Unlock()
		if up {
			return true
		}
		// Sampled at sampleInterval.
		time.Sleep(sampleInterval)
	}
	return false
}

func (s *sampler) violate(format string, args ...any) {
	if len(s.violations) < 50 {
		s.violations = append(s.violations, fmt.Sprintf(format, args...))
	}
}

// stop stops sampling and returns what it saw.
func (s *sampler) stop() samples {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return samples{api: s.apiSamples, apiFailures: s.apiFailures, slowestAPI: s.slowestAPI, slowestEtcd: s.slowestEtcd, etcd: s.etcdSamples, etcdLosses: s.etcdLosses, violations: s.violations,
		minHealthy: s.minHealthy, votingAtMin: s.votingAtMin}
}

// samples is what a sampler saw.
type samples struct {
	api, apiFailures, etcd, etcdLosses int
	slowestAPI, slowestEtcd            time.Duration
	minHealthy, votingAtMin            int
	violations                         []string
}
