package kubeadmcontrolplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// secretReads is the client one reconcile reads the cluster's Secrets with: the certificates, the
// kubeconfig and the etcd client need the same few, so each is read once per reconcile (a write to a
// Secret reads it again), through the manager's client (from its cache when the Secret carries the
// cluster-name label, from the API server otherwise).
type secretReads struct {
	client.Client
	secrets map[client.ObjectKey]*corev1.Secret
}

func newSecretReads(c client.Client) *secretReads {
	return &secretReads{Client: c, secrets: map[client.ObjectKey]*corev1.Secret{}}
}

// Get reads a Secret once; other objects are read from the client.
func (c *secretReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	if read, ok := c.secrets[key]; ok {
		read.DeepCopyInto(s)
		return nil
	}
	if err := c.Client.Get(ctx, key, s, opts...); err != nil {
		return err
	}
	c.secrets[key] = s.DeepCopy()
	return nil
}

// Create, Update and Patch forget what was read of the object.
func (c *secretReads) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	delete(c.secrets, client.ObjectKeyFromObject(obj))
	return c.Client.Create(ctx, obj, opts...)
}

func (c *secretReads) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	delete(c.secrets, client.ObjectKeyFromObject(obj))
	return c.Client.Update(ctx, obj, opts...)
}

func (c *secretReads) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	delete(c.secrets, client.ObjectKeyFromObject(obj))
	return c.Client.Patch(ctx, obj, p, opts...)
}
