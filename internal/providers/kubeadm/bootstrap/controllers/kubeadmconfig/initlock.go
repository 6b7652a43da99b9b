package kubeadmconfig

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// initLockKey is the ConfigMap key holding the lock's holder, as upstream's.
const initLockKey = "lock-information"

// initLock makes sure a single control plane Machine of a Cluster runs `kubeadm init`: a ConfigMap
// `<cluster>-lock`, owned by the Cluster, names the Machine holding it, as upstream's lock does.
type initLock struct {
	client client.Client
}

type lockInformation struct {
	MachineName string `json:"machineName"`
}

func initLockName(cluster *clusterv1.Cluster) string { return cluster.Name + "-lock" }

// lock reports whether machine holds the lock, taking it when it is free or its holder is gone.
func (l *initLock) lock(ctx context.Context, cluster *clusterv1.Cluster, machine string) (bool, error) {
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: initLockName(cluster)}
	for range 2 {
		cm := &corev1.ConfigMap{}
		err := l.client.Get(ctx, key, cm)
		switch {
		case apierrors.IsNotFound(err):
			info, _ := json.Marshal(lockInformation{MachineName: machine})
			cm = &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: key.Namespace, Name: key.Name,
					Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
					}},
				},
				Data: map[string]string{initLockKey: string(info)},
			}
			if err := l.client.Create(ctx, cm); err != nil {
				if apierrors.IsAlreadyExists(err) {
					continue
				}
				return false, fmt.Errorf("creating the init lock %s: %w", key, err)
			}
			return true, nil
		case err != nil:
			return false, fmt.Errorf("getting the init lock %s: %w", key, err)
		}
		info := lockInformation{}
		if err := json.Unmarshal([]byte(cm.Data[initLockKey]), &info); err != nil || info.MachineName == "" {
			return false, l.release(ctx, cm)
		}
		if info.MachineName == machine {
			return true, nil
		}
		holder := &clusterv1.Machine{}
		err = l.client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: info.MachineName}, holder)
		if apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Info("The Machine holding the init lock is gone: releasing the lock", "holder", info.MachineName)
			if err := l.release(ctx, cm); err != nil {
				return false, err
			}
			continue
		}
		return false, err
	}
	return false, nil
}

// unlock releases the lock of a Cluster, if any.
func (l *initLock) unlock(ctx context.Context, cluster *clusterv1.Cluster) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: initLockName(cluster)}}
	if err := l.release(ctx, cm); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Releasing the init lock")
	}
}

func (l *initLock) release(ctx context.Context, cm *corev1.ConfigMap) error {
	if err := l.client.Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing the init lock %s: %w", client.ObjectKeyFromObject(cm), err)
	}
	return nil
}
