package localcluster

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// The cluster certificate Secrets, named <cluster>-<purpose> and shaped as Cluster API's kubeadm
// providers create them: tls.crt and tls.key, type cluster.x-k8s.io/secret, the cluster-name label.
const (
	purposeCA             = "ca"
	purposeEtcd           = "etcd"
	purposeFrontProxy     = "proxy"
	purposeServiceAccount = "sa"
)

// caCommonNames are the common names kubeadm gives the CAs it creates.
var caCommonNames = map[string]string{purposeCA: "kubernetes", purposeEtcd: "etcd-ca", purposeFrontProxy: "front-proxy-ca"}

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
	for _, purpose := range []string{purposeCA, purposeEtcd, purposeFrontProxy, purposeServiceAccount} {
		secret, err := r.certificateSecret(ctx, s, purpose, stored)
		if err != nil {
			return out, err
		}
		if purpose == purposeServiceAccount {
			key, err := pki.ParseKey(secret.Data[corev1.TLSPrivateKeyKey])
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
		case purposeCA:
			out.CA = ca
		case purposeEtcd:
			out.EtcdCA = ca
		case purposeFrontProxy:
			out.FrontProxyCA = ca
		}
	}
	return out, nil
}

// certificateSecret returns the Secret of one purpose, created when missing.
func (r *Reconciler) certificateSecret(ctx context.Context, s *scope, purpose string, stored backend.Certificates) (*corev1.Secret, error) {
	log := ctrl.LoggerFrom(ctx)
	key := client.ObjectKey{Namespace: s.cluster.Namespace, Name: s.cluster.Name + "-" + purpose}
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
	case purposeServiceAccount:
		signer := stored.ServiceAccountKey
		if signer != nil {
			from = "stored"
		} else if signer, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			return nil, err
		}
		if certPEM, keyPEM, err = encodeServiceAccountKey(signer); err != nil {
			return nil, err
		}
	default:
		ca := map[string]*kubeconfig.CA{purposeCA: stored.CA, purposeEtcd: stored.EtcdCA, purposeFrontProxy: stored.FrontProxyCA}[purpose]
		if ca != nil {
			from = "stored"
		} else if ca, err = pki.NewCAFrom(pki.CertConfig{CommonName: caCommonNames[purpose], Now: time.Now()}); err != nil {
			return nil, err
		}
		if certPEM, keyPEM, err = encodeCA(ca); err != nil {
			return nil, err
		}
	}
	secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "LocalCluster",
				Name: s.localCluster.Name, UID: s.localCluster.UID, Controller: ptr.To(true),
			}},
		},
		Type: kubeconfig.SecretType,
		Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
	if from == "stored" {
		log.Info("Recreating Secret from the certificates stored with the cluster's data", "Secret", klog.KRef(key.Namespace, key.Name))
	} else {
		log.Info("Creating Secret with new certificates", "Secret", klog.KRef(key.Namespace, key.Name))
	}
	if err := r.Client.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Created meanwhile by someone else (for example a control plane provider): use theirs.
			if err := r.APIReader.Get(ctx, key, secret); err != nil {
				return nil, fmt.Errorf("getting Secret %s: %w", key, err)
			}
			return secret, nil
		}
		return nil, fmt.Errorf("creating Secret %s: %w", key, err)
	}
	return secret, nil
}

// encodeServiceAccountKey returns the PEM of a service account key pair as upstream's `<cluster>-sa`
// Secret holds it: the public key under tls.crt, the private key (PKCS#1 for RSA) under tls.key.
func encodeServiceAccountKey(key crypto.Signer) (pubPEM, keyPEM []byte, err error) {
	pubPEM, err = pki.EncodePublicKey(key.Public())
	if err != nil {
		return nil, nil, err
	}
	if k, ok := key.(*rsa.PrivateKey); ok {
		return pubPEM, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	}
	keyPEM, err = pki.EncodeKey(key)
	return pubPEM, keyPEM, err
}
