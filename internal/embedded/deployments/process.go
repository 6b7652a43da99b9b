package deployments

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// portFlags are the flags of capstan's managers that bind an address ("host:port") or a port.
var portFlags = map[string]bool{
	"--health-addr": true, "--metrics-bind-addr": true, "--diagnostics-address": true,
	"--profiler-address": true, "--webhook-port": true,
}

// hostFlags are the flags of capstan's managers that name only the address a server listens on.
var hostFlags = map[string]bool{"--webhook-host": true}

// rewritePorts replaces the values of port-binding flags with free loopback ports, so that any number of
// replicas and providers run side by side, and those of address flags with 127.0.0.1: nothing of the
// local runtime listens on another address of the machine, whatever the Deployment says (capstan's
// servers also default to 127.0.0.1 there, see localnet.ListenHost). A disabled address ("0", "" or a
// negative port) stays disabled. It returns the new arguments, the health address, if any, and which
// loopback port replaces each port the flags named (so that the container ports of the same numbers,
// which Services target, can be found).
func rewritePorts(args []string, freePort func() (int, error)) ([]string, string, map[int32]int32, error) {
	out := make([]string, 0, len(args))
	health := ""
	ports := map[int32]int32{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(arg, "=")
		if !portFlags[name] && !hostFlags[name] {
			out = append(out, arg)
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if hostFlags[name] {
			out = append(out, name+"=127.0.0.1")
			continue
		}
		if value == "0" || value == "" || strings.HasPrefix(value, "-") {
			out = append(out, name+"="+value)
			continue
		}
		port, err := freePort()
		if err != nil {
			return nil, "", nil, err
		}
		newValue := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if name == "--webhook-port" {
			newValue = strconv.Itoa(port)
		}
		if name == "--health-addr" {
			health = newValue
		}
		if original, err := portOf(value); err == nil {
			ports[original] = int32(port)
		}
		out = append(out, name+"="+newValue)
	}
	return out, health, ports, nil
}

// portOf returns the port of a flag value: "host:port", ":port" or "port".
func portOf(value string) (int32, error) {
	if _, p, err := net.SplitHostPort(value); err == nil {
		value = p
	}
	n, err := strconv.ParseInt(value, 10, 32)
	return int32(n), err
}

// environment resolves a container's environment as the kubelet would for the variables capstan's
// manifests use: literal values, the pod's name and namespace, and keys of Secrets and ConfigMaps.
func environment(ctx context.Context, c client.Reader, d *appsv1.Deployment, container *corev1.Container, podName string) ([]string, error) {
	env := []string{"POD_NAMESPACE=" + d.Namespace, "POD_NAME=" + podName}
	if len(container.EnvFrom) > 0 {
		return nil, fmt.Errorf("container %s uses envFrom (%s), which the local runtime does not support", container.Name, describeEnvFrom(container.EnvFrom[0]))
	}
	for _, e := range container.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+expand(e.Value, env))
			continue
		}
		v, err := valueFrom(ctx, c, d.Namespace, podName, e)
		if err != nil {
			return nil, err
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

func describeEnvFrom(from corev1.EnvFromSource) string {
	switch {
	case from.SecretRef != nil:
		return "Secret " + from.SecretRef.Name
	case from.ConfigMapRef != nil:
		return "ConfigMap " + from.ConfigMapRef.Name
	default:
		return "unknown source"
	}
}

func valueFrom(ctx context.Context, c client.Reader, namespace, podName string, e corev1.EnvVar) (string, error) {
	src := e.ValueFrom
	switch {
	case src.FieldRef != nil:
		switch src.FieldRef.FieldPath {
		case "metadata.namespace":
			return namespace, nil
		case "metadata.name":
			return podName, nil
		case "spec.nodeName":
			return "localhost", nil
		case "status.podIP", "status.hostIP":
			return "127.0.0.1", nil
		}
		return "", fmt.Errorf("env %s: field %s is not supported by the local runtime", e.Name, src.FieldRef.FieldPath)
	case src.SecretKeyRef != nil:
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.SecretKeyRef.Name}, s); err != nil {
			if src.SecretKeyRef.Optional != nil && *src.SecretKeyRef.Optional {
				return "", nil
			}
			return "", fmt.Errorf("env %s: reading Secret %s: %w", e.Name, src.SecretKeyRef.Name, err)
		}
		return string(s.Data[src.SecretKeyRef.Key]), nil
	case src.ConfigMapKeyRef != nil:
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.ConfigMapKeyRef.Name}, cm); err != nil {
			if src.ConfigMapKeyRef.Optional != nil && *src.ConfigMapKeyRef.Optional {
				return "", nil
			}
			return "", fmt.Errorf("env %s: reading ConfigMap %s: %w", e.Name, src.ConfigMapKeyRef.Name, err)
		}
		return cm.Data[src.ConfigMapKeyRef.Key], nil
	}
	return "", fmt.Errorf("env %s: this kind of valueFrom is not supported by the local runtime", e.Name)
}

// expand replaces $(VAR) references to earlier variables, as the kubelet does.
func expand(value string, env []string) string {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		value = strings.ReplaceAll(value, "$("+k+")", v)
	}
	return value
}

// expandArgs replaces $(VAR) references in arguments.
func expandArgs(args, env []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = expand(a, env)
	}
	return out
}
