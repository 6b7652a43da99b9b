package localnet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RoutingEnv names the environment variable that the embedded cluster's local runtime sets to
// RoutingEndpointSlices for its processes.
const (
	RoutingEnv            = "CAPSTAN_SERVICE_ROUTING"
	RoutingEndpointSlices = "endpointslices"
)

// DialFunc dials an address.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer dials Services through their EndpointSlices.
type Dialer struct {
	// Client reads Services and EndpointSlices.
	Client client.Reader
	// Direct dials the addresses that are not Service names, and the endpoints; a net.Dialer when nil.
	Direct DialFunc
}

// ForEnvironment returns a Dialer's DialContext when the process runs in the embedded cluster's local
// runtime (RoutingEnv), and nil otherwise, so that callers keep their transport's default.
func ForEnvironment(c client.Reader) DialFunc {
	if os.Getenv(RoutingEnv) != RoutingEndpointSlices {
		return nil
	}
	return (&Dialer{Client: c}).DialContext
}

// ListenHost is the address servers listen on by default: 127.0.0.1 in a process of the embedded
// cluster's local runtime (RoutingEnv), where everything is reached on loopback and nothing else of the
// machine's network must be, and "" (every address, what a Pod needs) elsewhere.
func ListenHost() string {
	if os.Getenv(RoutingEnv) == RoutingEndpointSlices {
		return "127.0.0.1"
	}
	return ""
}

// DialContext dials addr; a Service name is resolved to one of its ready endpoints.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	direct := d.Direct
	if direct == nil {
		direct = (&net.Dialer{}).DialContext
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return direct(ctx, network, addr)
	}
	service, namespace, ok := ServiceName(host)
	if !ok {
		return direct(ctx, network, addr)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("dialing Service %s/%s: port %q: %w", namespace, service, portText, err)
	}
	endpoint, err := d.Resolve(ctx, namespace, service, int32(port))
	if err != nil {
		return nil, err
	}
	if local, ok := Loopback(endpoint); ok {
		endpoint = local
	}
	return direct(ctx, network, endpoint)
}

// ServiceName returns the Service and namespace of a cluster DNS name.
func ServiceName(host string) (service, namespace string, ok bool) {
	host = strings.TrimSuffix(strings.TrimSuffix(host, "."), ".cluster.local")
	rest, found := strings.CutSuffix(host, ".svc")
	if !found {
		return "", "", false
	}
	service, namespace, ok = strings.Cut(rest, ".")
	if !ok || service == "" || namespace == "" || strings.Contains(namespace, ".") {
		return "", "", false
	}
	return service, namespace, true
}

// Resolve returns "address:port" of a ready endpoint of a Service's port.
func (d *Dialer) Resolve(ctx context.Context, namespace, service string, port int32) (string, error) {
	svc := &corev1.Service{}
	if err := d.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: service}, svc); err != nil {
		return "", fmt.Errorf("resolving Service %s/%s: %w", namespace, service, err)
	}
	portName, found := "", false
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			portName, found = p.Name, true
		}
	}
	if !found {
		return "", fmt.Errorf("service %s/%s has no port %d", namespace, service, port)
	}
	slices := &discoveryv1.EndpointSliceList{}
	if err := d.Client.List(ctx, slices, client.InNamespace(namespace), client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return "", fmt.Errorf("listing the EndpointSlices of Service %s/%s: %w", namespace, service, err)
	}
	var candidates []string
	for _, s := range slices.Items {
		for _, p := range s.Ports {
			if ptr.Deref(p.Name, "") != portName || p.Port == nil {
				continue
			}
			for _, e := range s.Endpoints {
				if !ptr.Deref(e.Conditions.Ready, true) || len(e.Addresses) == 0 {
					continue
				}
				candidates = append(candidates, net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*p.Port))))
			}
		}
	}
	if len(candidates) == 0 {
		return "", errors.New("service " + namespace + "/" + service + " has no ready endpoint for port " + strconv.Itoa(int(port)))
	}
	return candidates[rand.IntN(len(candidates))], nil
}
