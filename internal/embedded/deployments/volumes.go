package deployments

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReasonVolumeNotSupported says a Deployment has a volume of a kind the runtime cannot provide.
const ReasonVolumeNotSupported = "VolumeNotSupportedLocally"

// dataDir is the symbolic link of a volume directory to the directory of its current content; the files
// of the volume are links through it, so a reader sees the whole content change at once, as with the
// kubelet's volumes.
const dataDir = "..data"

// unsupportedVolume returns why one of the Deployment's volumes cannot be provided, or "".
func unsupportedVolume(d *appsv1.Deployment) string {
	for _, v := range d.Spec.Template.Spec.Volumes {
		switch {
		case v.Secret != nil, v.ConfigMap != nil, v.EmptyDir != nil, v.DownwardAPI != nil:
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.Secret == nil && src.ConfigMap == nil && src.ServiceAccountToken == nil && src.DownwardAPI == nil {
					return fmt.Sprintf("volume %s projects a source the local runtime cannot provide: it provides secret, configMap, downwardAPI and serviceAccountToken sources", v.Name)
				}
			}
		default:
			return fmt.Sprintf("volume %s is of a kind the local runtime of the embedded management cluster cannot provide (%s): "+
				"it provides secret, configMap, emptyDir, downwardAPI and projected volumes", v.Name, volumeKind(v))
		}
	}
	return ""
}

// volumeKind names the source of a volume, for messages.
func volumeKind(v corev1.Volume) string {
	switch {
	case v.HostPath != nil:
		return "hostPath"
	case v.PersistentVolumeClaim != nil:
		return "persistentVolumeClaim"
	case v.CSI != nil:
		return "csi"
	case v.Ephemeral != nil:
		return "ephemeral"
	case v.NFS != nil:
		return "nfs"
	case v.Image != nil:
		return "image"
	default:
		return "unknown"
	}
}

// volumes are the files of one replica's volumes.
type volumes struct {
	// dir holds one directory per volume.
	dir string
	// tokenRenewals says when each projected service account token ("<volume>/<path>") is renewed, and
	// tokenRenewal is the earliest of them.
	tokenRenewals map[string]time.Time
	tokenRenewal  time.Time
}

func (v *volumes) path(name string) string { return filepath.Join(v.dir, name) }

// mounts returns, for each mount path of the container, where its files are on this machine.
func (v *volumes) mounts(c *corev1.Container) map[string]string {
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		out[m.MountPath] = filepath.Join(v.path(m.Name), m.SubPath)
	}
	return out
}

// sync writes the content of every volume of the Deployment for a replica, where it changed.
func (r *Runtime) syncVolumes(ctx context.Context, d *appsv1.Deployment, podName string, v *volumes) error {
	var errs []error
	v.tokenRenewal = time.Time{}
	for _, vol := range d.Spec.Template.Spec.Volumes {
		dir := v.path(vol.Name)
		if vol.EmptyDir != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		files, err := r.volumeFiles(ctx, d, podName, vol, v)
		if err != nil {
			errs = append(errs, fmt.Errorf("volume %s: %w", vol.Name, err))
			continue
		}
		if err := writeVolume(dir, files); err != nil {
			errs = append(errs, fmt.Errorf("volume %s: %w", vol.Name, err))
		}
	}
	return errors.Join(errs...)
}

// file is one file of a volume.
type file struct {
	data []byte
	mode fs.FileMode
}

// volumeFiles returns the files of a volume, keyed by their path in the volume.
func (r *Runtime) volumeFiles(ctx context.Context, d *appsv1.Deployment, podName string, vol corev1.Volume, v *volumes) (map[string]file, error) {
	files := map[string]file{}
	switch {
	case vol.Secret != nil:
		s := vol.Secret
		return files, r.secretFiles(ctx, d.Namespace, s.SecretName, s.Items, ptr.Deref(s.Optional, false), mode(s.DefaultMode), files)
	case vol.ConfigMap != nil:
		c := vol.ConfigMap
		return files, r.configMapFiles(ctx, d.Namespace, c.Name, c.Items, ptr.Deref(c.Optional, false), mode(c.DefaultMode), files)
	case vol.DownwardAPI != nil:
		return files, downwardFiles(d, podName, vol.DownwardAPI.Items, mode(vol.DownwardAPI.DefaultMode), files)
	case vol.Projected != nil:
		defaultMode := mode(vol.Projected.DefaultMode)
		for _, src := range vol.Projected.Sources {
			var err error
			switch {
			case src.Secret != nil:
				err = r.secretFiles(ctx, d.Namespace, src.Secret.Name, src.Secret.Items, ptr.Deref(src.Secret.Optional, false), defaultMode, files)
			case src.ConfigMap != nil:
				err = r.configMapFiles(ctx, d.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, ptr.Deref(src.ConfigMap.Optional, false), defaultMode, files)
			case src.DownwardAPI != nil:
				err = downwardFiles(d, podName, src.DownwardAPI.Items, defaultMode, files)
			case src.ServiceAccountToken != nil:
				err = r.tokenFile(ctx, d, vol.Name, src.ServiceAccountToken, defaultMode, files, v)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

func mode(m *int32) fs.FileMode {
	if m == nil {
		return 0o644
	}
	return fs.FileMode(*m)
}

// project adds the keys of data to files, all of them or those of items.
func project(data map[string][]byte, items []corev1.KeyToPath, defaultMode fs.FileMode, what string, files map[string]file) error {
	if len(items) == 0 {
		for k, v := range data {
			files[k] = file{data: v, mode: defaultMode}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("%s has no key %s", what, it.Key)
		}
		m := defaultMode
		if it.Mode != nil {
			m = fs.FileMode(*it.Mode)
		}
		files[it.Path] = file{data: v, mode: m}
	}
	return nil
}

func (r *Runtime) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional bool, m fs.FileMode, files map[string]file) error {
	s := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) && optional {
			return nil
		}
		return fmt.Errorf("reading Secret %s: %w", name, err)
	}
	return project(s.Data, items, m, "Secret "+name, files)
}

func (r *Runtime) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional bool, m fs.FileMode, files map[string]file) error {
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) && optional {
			return nil
		}
		return fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	data := maps.Clone(cm.BinaryData)
	if data == nil {
		data = map[string][]byte{}
	}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	return project(data, items, m, "ConfigMap "+name, files)
}

// downwardFiles adds the pod fields the runtime knows: name, namespace, labels and annotations.
func downwardFiles(d *appsv1.Deployment, podName string, items []corev1.DownwardAPIVolumeFile, defaultMode fs.FileMode, files map[string]file) error {
	for _, it := range items {
		if it.FieldRef == nil {
			return fmt.Errorf("downward API file %s: only fieldRef is supported by the local runtime", it.Path)
		}
		var value string
		switch it.FieldRef.FieldPath {
		case "metadata.name":
			value = podName
		case "metadata.namespace":
			value = d.Namespace
		case "metadata.labels":
			value = formatMap(d.Spec.Template.Labels)
		case "metadata.annotations":
			value = formatMap(d.Spec.Template.Annotations)
		default:
			return fmt.Errorf("downward API file %s: field %s is not supported by the local runtime", it.Path, it.FieldRef.FieldPath)
		}
		m := defaultMode
		if it.Mode != nil {
			m = fs.FileMode(*it.Mode)
		}
		files[it.Path] = file{data: []byte(value), mode: m}
	}
	return nil
}

func formatMap(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

// tokenFile adds a token of the Deployment's ServiceAccount; it is requested again once 80% of its life
// has passed, as the kubelet does.
func (r *Runtime) tokenFile(ctx context.Context, d *appsv1.Deployment, volume string, src *corev1.ServiceAccountTokenProjection, m fs.FileMode,
	files map[string]file, v *volumes) error {
	current, err := os.ReadFile(filepath.Join(v.path(volume), src.Path))
	renewAt, known := v.tokenRenewals[volume+"/"+src.Path]
	if err == nil && known && time.Now().Before(renewAt) {
		files[src.Path] = file{data: current, mode: m}
		v.noteRenewal(renewAt)
		return nil
	}
	seconds := ptr.Deref(src.ExpirationSeconds, 3600)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(seconds)}}
	if src.Audience != "" {
		tr.Spec.Audiences = []string{src.Audience}
	}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: serviceAccount(d)}}
	if err := r.Client.SubResource("token").Create(ctx, account, tr); err != nil {
		return fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", d.Namespace, account.Name, err)
	}
	renewAt = time.Now().Add(time.Duration(float64(seconds)*0.8) * time.Second)
	if v.tokenRenewals == nil {
		v.tokenRenewals = map[string]time.Time{}
	}
	v.tokenRenewals[volume+"/"+src.Path] = renewAt
	v.noteRenewal(renewAt)
	files[src.Path] = file{data: []byte(tr.Status.Token), mode: m}
	return nil
}

func (v *volumes) noteRenewal(at time.Time) {
	if v.tokenRenewal.IsZero() || at.Before(v.tokenRenewal) {
		v.tokenRenewal = at
	}
}

func serviceAccount(d *appsv1.Deployment) string {
	if sa := d.Spec.Template.Spec.ServiceAccountName; sa != "" {
		return sa
	}
	return "default"
}

// writeVolume makes dir hold exactly files, replacing the content at once when it changed: the files are
// written into a new directory, the ..data link is switched to it, and each top-level entry of the
// volume is a link through ..data.
func writeVolume(dir string, files map[string]file) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if unchanged(dir, files) {
		return nil
	}
	content, err := os.MkdirTemp(dir, "..content-")
	if err != nil {
		return err
	}
	if err := os.Chmod(content, 0o755); err != nil {
		return err
	}
	top := map[string]bool{}
	for p, f := range files {
		clean := filepath.Clean(p)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.HasPrefix(clean, "..") {
			return fmt.Errorf("file path %q leaves the volume", p)
		}
		target := filepath.Join(content, clean)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, f.data, f.mode.Perm()); err != nil {
			return err
		}
		top[strings.SplitN(clean, string(filepath.Separator), 2)[0]] = true
	}
	old, _ := os.Readlink(filepath.Join(dir, dataDir))
	tmpLink := filepath.Join(dir, dataDir+"_tmp")
	_ = os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(content), tmpLink); err != nil {
		return err
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataDir)); err != nil {
		return err
	}
	for name := range top {
		link := filepath.Join(dir, name)
		if target, err := os.Readlink(link); err == nil && target == filepath.Join(dataDir, name) {
			continue
		}
		_ = os.RemoveAll(link)
		if err := os.Symlink(filepath.Join(dataDir, name), link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") || top[e.Name()] {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	if old != "" && old != filepath.Base(content) {
		_ = os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// unchanged reports whether the current content of a volume directory is exactly files.
func unchanged(dir string, files map[string]file) bool {
	current := filepath.Join(dir, dataDir)
	if _, err := os.Stat(current); err != nil {
		return false
	}
	count := 0
	err := filepath.WalkDir(current+"/", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(current, path)
		f, ok := files[rel]
		if !ok {
			return errors.New("extra file")
		}
		info, err := e.Info()
		if err != nil || info.Mode().Perm() != f.mode.Perm() {
			return errors.New("mode changed")
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(data, f.data) {
			return errors.New("content changed")
		}
		count++
		return nil
	})
	return err == nil && count == len(files)
}

// rewritePaths replaces, in arguments or environment values, the mount paths of the container's volumes
// by the directories that hold their files here: a value that is a mount path, or starts with one
// followed by "/", either whole or after the "=" of a flag.
func rewritePaths(values []string, mounts map[string]string) []string {
	paths := slices.Collect(maps.Keys(mounts))
	// The longest mount path wins when one is inside another.
	slices.SortFunc(paths, func(a, b string) int { return len(b) - len(a) })
	out := make([]string, len(values))
	for i, value := range values {
		out[i] = value
		prefix, rest := "", value
		if name, v, ok := strings.Cut(value, "="); ok && !strings.HasPrefix(value, "/") {
			prefix, rest = name+"=", v
		}
		for _, p := range paths {
			if rest == p || strings.HasPrefix(rest, strings.TrimSuffix(p, "/")+"/") {
				out[i] = prefix + mounts[p] + strings.TrimPrefix(rest, strings.TrimSuffix(p, "/"))
				break
			}
		}
	}
	return out
}

// rewriteEnvPaths applies rewritePaths to the values of NAME=value pairs.
func rewriteEnvPaths(env []string, mounts map[string]string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out[i] = k + "=" + rewritePaths([]string{v}, mounts)[0]
	}
	return out
}
