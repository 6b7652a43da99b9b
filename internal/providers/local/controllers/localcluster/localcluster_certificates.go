package localcluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// caCommonNames are the common names kubeadm gives the CAs it creates.
var caCommonNames = map[clustersecret.Purpose]string{clustersecret.ClusterCA: "kubernetes", clustersecret.EtcdCA: "etcd-ca", clustersecret.FrontProxyCA: "front-proxy-ca"}

// reconcileCertificates returns the cluster's certificates from its Secrets `<cluster>-ca`, `-etcd`,
// `-proxy` and `-sa`, creating those that are missing: from the certificates stored in the cluster's data
// when there are (the Secret was lost), new ones otherwise. A Secret that another component (a kubeadm
// bootstrap or control plane provider, the user) created first is used as it is. The Secrets the provider
// creates are owned by the LocalCluster, so they are deleted with it and moved with the Cluster.
func (r *Reconciler) reconcileCertificates(ctx context.Context, s *scope) (backend.Certificates, error) {
	var out backend.Certificates
	stored, err := r.Backend.StoredCertificates(s.key())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Reading the certificates stored with the cluster's data; creating new ones where missing")
		stored = backend.Certificates{}
	}
	for _, purpose := range []clustersecret.Purpose{clustersecret.ClusterCA, clustersecret.EtcdCA, clustersecret.FrontProxyCA, clustersecret.ServiceAccount} {
		secret, err := r.certificateSecret(ctx, s, purpose, stored)
		if err != nil {
			return out, err
		}
		if purpose == clustersecret.ServiceAccount {
			key, err := pki.ParseKey(secret.Data[clustersecret.KeyKey])
			if err != nil {
				return out, fmt.Errorf("reading the service account key of Secret %s: %w", secret.Name, err)
			}
			out.ServiceAccountKey = key
			continue
		}
		ca, err := kubeconfig.CAFromSecret(secret)
		if err != nil {
			return out, fmt.Errorf("reading Secret %s: %w", secret.Name, err)
		}
		switch purpose {
		case clustersecret.ClusterCA:
			out.CA = ca
		case clustersecret.EtcdCA:
			out.EtcdCA = ca
		case clustersecret.FrontProxyCA:
			out.FrontProxyCA = ca
		}
	}
	return out, nil
}

// certificateSecret returns the Secret of one purpose, created when missing.
func (r *Reconciler) certificateSecret(ctx context.Context, s *scope, purpose clustersecret.Purpose, stored backend.Certificates) (*corev1.Secret, error) {
	log := ctrl.LoggerFrom(ctx)
	cluster := client.ObjectKeyFromObject(s.cluster)
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: clustersecret.Name(cluster.Name, purpose)}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, key, secret)
	if err == nil {
		return secret, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting Secret %s: %w", key, err)
	}
	var certPEM, keyPEM []byte
	from := "new"
	switch purpose {
	case clustersecret.ServiceAccount:
		signer := stored.ServiceAccountKey
		if signer != nil {
			from = "stored"
		} else if signer, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			return nil, err
		}
		if certPEM, keyPEM, err = clustersecret.EncodeServiceAccountKey(signer); err != nil {
			return nil, err
		}
	default:
		ca := map[clustersecret.Purpose]*kubeconfig.CA{clustersecret.ClusterCA: stored.CA, clustersecret.EtcdCA: stored.EtcdCA, clustersecret.FrontProxyCA: stored.FrontProxyCA}[purpose]
		if ca != nil {
			from = "stored"
		} else if ca, err = pki.NewCAFrom(pki.CertConfig{CommonName: caCommonNames[purpose], Now: time.Now()}); err != nil {
			return nil, err
		}
		if certPEM, keyPEM, err = encodeCA(ca); err != nil {
			return nil, err
		}
	}
	secret = clustersecret.NewCertificate(cluster, purpose, certPEM, keyPEM, &metav1.OwnerReference{
		APIVersion: infrav1.GroupVersion.String(), Kind: "LocalCluster",
		Name: s.localCluster.Name, UID: s.localCluster.UID, Controller: ptr.To(true),
	})
	if from == "stored" {
		log.Info("Recreating Secret from the certificates stored with the cluster's data", "Secret", klog.KRef(key.Namespace, key.Name))
	} else {
		log.Info("Creating Secret with new certificates", "Secret", klog.KRef(key.Namespace, key.Name))
	}
	// Created meanwhile by someone else (for example a control plane provider): theirs is used.
	secret, _, err = clustersecret.Create(ctx, r.Client, r.APIReader, secret)
	return secret, err
}
