package v1beta1

import corev1 "k8s.io/api/core/v1"

// ClusterSecretType is the type of the Secrets Cluster API writes and reads: kubeconfigs, certificate
// authorities, bootstrap data.
const ClusterSecretType corev1.SecretType = "cluster.x-k8s.io/secret"
