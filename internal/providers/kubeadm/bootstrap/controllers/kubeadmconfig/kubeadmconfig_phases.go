package kubeadmconfig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/bootstrap/userdata"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/certs"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/kubeadmapi"
)

// SpecHashAnnotation is the annotation of a bootstrap data Secret that holds a hash of the KubeadmConfig
// spec the data was rendered from, so that a change of the spec before the Machine is provisioned renders the
// data again.
const SpecHashAnnotation = "bootstrap.cluster.x-k8s.io/kubeadmconfig-spec-hash"

// scope is what one reconcile works on, and the facts it found.
type scope struct {
	config  *bootstrapv1.KubeadmConfig
	owner   *owner
	cluster *clusterv1.Cluster
	facts   facts
}

// configError is a problem of the KubeadmConfig (or of what it references) that only the user can fix; it
// is reported in the DataSecretAvailable condition and looked at again after ConfigInterval.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func configErrorf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if err := r.ensureDataSecretOwner(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case !s.cluster.Status.InfrastructureReady:
		log.V(1).Info("Waiting for the Cluster's infrastructure to be ready")
		s.facts.data = dataWaitingInfrastructure
		return ctrl.Result{}, nil

	// The owner already has bootstrap data while the status says nothing: the KubeadmConfig was moved or
	// restored without its status.
	case s.owner.dataSecretName != nil && (!s.config.Status.Ready || s.config.Status.DataSecretName == nil):
		s.facts.data, s.facts.dataSecretName, s.facts.certs = dataAvailable, *s.owner.dataSecretName, certsAvailable
		return ctrl.Result{}, nil

	case s.config.Status.Ready:
		regenerate, err := r.needsRegeneration(ctx, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !regenerate {
			s.facts.data, s.facts.dataSecretName, s.facts.certs = dataAvailable, ptr.Deref(s.config.Status.DataSecretName, s.config.Name), certsAvailable
			if jc := s.config.Spec.JoinConfiguration; jc != nil && jc.Discovery.BootstrapToken != nil {
				switch {
				case !s.owner.hasNodeRefs():
					return r.refreshToken(ctx, s)
				case s.owner.isPool():
					return r.rotateToken(ctx, s)
				}
			}
			return ctrl.Result{}, nil
		}
		log.Info("Rendering the bootstrap data again: the KubeadmConfig changed before the " + s.owner.kind + " was provisioned")
	}

	if stale, err := r.staleConfig(ctx, s); err != nil {
		return ctrl.Result{}, err
	} else if stale {
		// The event of the newer version brings the config back, even when it was a write of this
		// controller's own of the status only (LetThroughAwaited).
		return r.writes.Await(s.config), nil
	}
	var err error
	var result ctrl.Result
	switch {
	case !controlPlaneInitialized(s.cluster):
		result, err = r.reconcileInit(ctx, s)
	case s.owner.isControlPlane():
		result, err = r.reconcileJoin(ctx, s, userdata.JoinControlPlane)
	default:
		result, err = r.reconcileJoin(ctx, s, userdata.JoinWorker)
	}
	var cfgErr *configError
	if errors.As(err, &cfgErr) {
		log.Info("The bootstrap data cannot be generated", "reason", cfgErr.msg)
		s.facts.data, s.facts.dataMessage = dataFailed, cfgErr.msg
		return ctrl.Result{RequeueAfter: r.ConfigInterval}, nil
	}
	return result, err
}

// staleConfig reports whether the KubeadmConfig about to be rendered is older than the API server's: the
// cache has not seen the status of a render that just happened (or another change). Rendering from it
// would write the data Secret again (a create refused, then an update) and, for a join, create a second
// bootstrap token; the reconcile waits for the watch event of the newer config instead. Only a config that may
// be rendered now is read again, once per reconcile; without an APIReader nothing is.
func (r *Reconciler) staleConfig(ctx context.Context, s *scope) (bool, error) {
	if r.APIReader == nil || (!controlPlaneInitialized(s.cluster) && !s.owner.isControlPlane()) {
		return false, nil
	}
	fresh := &bootstrapv1.KubeadmConfig{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.config), fresh); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("reading the KubeadmConfig again before rendering: %w", err)
	}
	if fresh.ResourceVersion == s.config.ResourceVersion {
		return false, nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("The cached KubeadmConfig is behind the API server: waiting for the newer one before rendering")
	return true, nil
}

// needsRegeneration reports whether data already rendered must be rendered again: the owner is not
// provisioned yet and the spec is not the one the data was rendered from (or the Secret is gone).
func (r *Reconciler) needsRegeneration(ctx context.Context, s *scope) (bool, error) {
	if s.owner.provisioned() {
		return false, nil
	}
	// Data rendered for `kubeadm init` is never turned into join data by a change of the spec.
	if controlPlaneInitialized(s.cluster) && s.config.Spec.JoinConfiguration == nil {
		return false, nil
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: s.config.Namespace, Name: ptr.Deref(s.config.Status.DataSecretName, s.config.Name)}
	if err := r.Client.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("getting the bootstrap data Secret %s: %w", key, err)
	}
	hash, err := specHash(&s.config.Spec)
	if err != nil {
		return false, err
	}
	return secret.Annotations[SpecHashAnnotation] != hash, nil
}

func specHash(spec *bootstrapv1.KubeadmConfigSpec) (string, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hashing the KubeadmConfig spec: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// ownerVersion parses the owner's Kubernetes version, which selects the kubeadm API version.
func ownerVersion(o *owner) (semver.Version, error) {
	if o.version == nil || *o.version == "" {
		field := "spec.version"
		if o.isPool() {
			field = "spec.template.spec.version"
		}
		return semver.Version{}, configErrorf("%s %s has no %s: the kubeadm configuration depends on the Kubernetes version", o.kind, o.name(), field)
	}
	v, err := kubeadmapi.ParseVersion(*o.version)
	if err != nil {
		return semver.Version{}, &configError{msg: err.Error()}
	}
	if _, err := kubeadmapi.APIVersion(v); err != nil {
		return semver.Version{}, &configError{msg: err.Error()}
	}
	return v, nil
}

// reconcileInit renders the `kubeadm init` data of the first control plane Machine; other Machines wait for
// the control plane to be initialized.
func (r *Reconciler) reconcileInit(ctx context.Context, s *scope) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	s.facts.data = dataWaitingControlPlane
	spec := &s.config.Spec
	if !s.owner.isControlPlane() || (spec.InitConfiguration == nil && spec.ClusterConfiguration == nil) {
		log.V(1).Info("Waiting for the control plane to be initialized")
		return ctrl.Result{RequeueAfter: r.WaitInterval}, nil
	}
	lock := &initLock{client: r.Client}
	locked, err := lock.lock(ctx, s.cluster, s.owner.name())
	if err != nil {
		return ctrl.Result{}, err
	}
	if !locked {
		log.Info("Another control plane Machine is being initialized, waiting for the control plane to be initialized")
		return ctrl.Result{RequeueAfter: r.WaitInterval}, nil
	}
	defer func() {
		if reterr != nil {
			lock.unlock(ctx, s.cluster)
		}
	}()

	version, err := ownerVersion(s.owner)
	if err != nil {
		return ctrl.Result{}, err
	}
	log.Info("Rendering the bootstrap data of the first control plane Machine")
	if spec.ClusterConfiguration == nil {
		spec.ClusterConfiguration = &bootstrapv1.ClusterConfiguration{TypeMeta: metav1.TypeMeta{APIVersion: kubeadmapi.V1Beta4, Kind: "ClusterConfiguration"}}
	}
	if spec.InitConfiguration == nil {
		spec.InitConfiguration = &bootstrapv1.InitConfiguration{TypeMeta: metav1.TypeMeta{APIVersion: kubeadmapi.V1Beta4, Kind: "InitConfiguration"}}
	}
	fillClusterConfiguration(spec.ClusterConfiguration, s.cluster, s.owner.version)

	clusterCerts := certs.ForControlPlane(spec.ClusterConfiguration)
	key := client.ObjectKeyFromObject(s.cluster)
	if s.cluster.Spec.ControlPlaneRef == nil {
		owner := metav1.OwnerReference{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: s.config.Name, UID: s.config.UID, Controller: ptr.To(true)}
		err = clusterCerts.LookupOrGenerate(ctx, r.Client, key, owner)
	} else {
		// The control plane provider owns the certificates.
		err = clusterCerts.Lookup(ctx, r.Client, key)
	}
	if err != nil {
		s.facts.certs, s.facts.certsMessage = certsGenerationFailed, err.Error()
		return ctrl.Result{}, err
	}
	s.facts.certs = certsAvailable

	clusterYAML, err := kubeadmapi.ClusterConfiguration(spec.ClusterConfiguration, version)
	if err != nil {
		return ctrl.Result{}, err
	}
	initYAML, err := kubeadmapi.InitConfiguration(defaultedInit(spec.InitConfiguration), spec.ClusterConfiguration, version)
	if err != nil {
		return ctrl.Result{}, err
	}
	in := &userdata.Input{Step: userdata.Init, ClusterConfiguration: clusterYAML, InitConfiguration: initYAML}
	if err := r.fillInput(ctx, s, in, clusterCerts.Files()); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.render(ctx, s, in)
}

// reconcileJoin renders the `kubeadm join` data of a Machine once the control plane is initialized.
func (r *Reconciler) reconcileJoin(ctx context.Context, s *scope, step userdata.Step) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	spec := &s.config.Spec
	// A join that needs a new bootstrap token needs the workload cluster, which the cluster cache connects
	// on demand: ask for it before changing anything, so that waiting for the connection writes nothing
	// (the KubeadmConfig is reconciled again as soon as the connection is up).
	if needsNewToken(spec.JoinConfiguration) {
		if _, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster)); errors.Is(err, clustercache.ErrClusterNotConnected) {
			log.Info("Waiting for the connection to the workload cluster to create a bootstrap token")
			s.facts.data = dataWaitingConnection
			return ctrl.Result{RequeueAfter: r.WaitInterval}, nil
		}
	}
	// The control plane is initialized: the init lock is released, as upstream's, once per join rendered
	// (not at each reconcile of a join that waits).
	(&initLock{client: r.Client}).unlock(ctx, s.cluster)
	if spec.JoinConfiguration == nil {
		log.Info("Creating a default JoinConfiguration")
		spec.JoinConfiguration = &bootstrapv1.JoinConfiguration{}
	}
	if step == userdata.JoinWorker && spec.JoinConfiguration.ControlPlane != nil {
		return ctrl.Result{}, configErrorf("%s %s joins workers, but spec.joinConfiguration.controlPlane is set", s.owner.kind, s.owner.name())
	}
	if step == userdata.JoinControlPlane && spec.JoinConfiguration.ControlPlane == nil {
		spec.JoinConfiguration.ControlPlane = &bootstrapv1.JoinControlPlane{}
	}
	version, err := ownerVersion(s.owner)
	if err != nil {
		return ctrl.Result{}, err
	}

	clusterCerts := certs.ForWorker(spec.JoinConfiguration.CACertPath)
	if step == userdata.JoinControlPlane {
		clusterCerts = certs.ForControlPlane(spec.ClusterConfiguration)
	}
	if err := clusterCerts.Lookup(ctx, r.Client, client.ObjectKeyFromObject(s.cluster)); err != nil {
		s.facts.certs, s.facts.certsMessage = certsCorrupted, err.Error()
		return ctrl.Result{}, err
	}
	if err := clusterCerts.EnsureAllExist(); err != nil {
		s.facts.certs, s.facts.certsMessage = certsCorrupted, fmt.Sprintf("The cluster certificates a joining Machine needs are missing: %v", err)
		return ctrl.Result{RequeueAfter: r.WaitInterval}, nil
	}
	s.facts.certs = certsAvailable

	if res, err := r.reconcileDiscovery(ctx, s, clusterCerts); err != nil || !res.IsZero() {
		return res, err
	}

	log.Info("Rendering the bootstrap data of a joining Machine", "controlPlane", step == userdata.JoinControlPlane)
	join := defaultedJoin(spec.JoinConfiguration)
	var files []bootstrapv1.File
	var clusterConfiguration *bootstrapv1.ClusterConfiguration
	if step == userdata.JoinWorker {
		// The Machine controller removes this taint once it has synced the Node's labels; it is not
		// written to the KubeadmConfig.
		if !hasTaint(join.NodeRegistration.Taints, clusterv1.NodeUninitializedTaintKey) {
			join.NodeRegistration.Taints = append(join.NodeRegistration.Taints, corev1.Taint{Key: clusterv1.NodeUninitializedTaintKey, Effect: corev1.TaintEffectNoSchedule})
		}
	} else {
		files = clusterCerts.Files()
		clusterConfiguration = spec.ClusterConfiguration
	}
	joinYAML, err := kubeadmapi.JoinConfiguration(join, clusterConfiguration, version)
	if err != nil {
		return ctrl.Result{}, err
	}
	in := &userdata.Input{Step: step, JoinConfiguration: joinYAML,
		UseExperimentalRetryJoin: spec.UseExperimentalRetryJoin} //nolint:staticcheck // deprecated upstream, still served and honoured
	if err := r.fillInput(ctx, s, in, files); err != nil {
		return ctrl.Result{}, err
	}
	if f := spec.JoinConfiguration.Discovery.File; f != nil && f.KubeConfig != nil {
		kubeconfig, err := discoveryKubeconfig(f)
		if err != nil {
			return ctrl.Result{}, err
		}
		in.Files = append(in.Files, *kubeconfig)
	}
	if err := r.render(ctx, s, in); err != nil {
		return ctrl.Result{}, err
	}
	// Looked at again to keep the bootstrap token fresh until the Node joins.
	return ctrl.Result{RequeueAfter: r.tokenCheckInterval()}, nil
}

// needsNewToken reports whether a join's discovery will get a new bootstrap token: none given, and no file
// discovery.
func needsNewToken(jc *bootstrapv1.JoinConfiguration) bool {
	if jc == nil {
		return true
	}
	return jc.Discovery.File == nil && (jc.Discovery.BootstrapToken == nil || jc.Discovery.BootstrapToken.Token == "")
}

func hasTaint(taints []corev1.Taint, key string) bool {
	for _, t := range taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// defaultedInit applies upstream's webhook defaults that the CRD cannot (imagePullPolicy) to a copy.
func defaultedInit(in *bootstrapv1.InitConfiguration) *bootstrapv1.InitConfiguration {
	out := in.DeepCopy()
	if out.NodeRegistration.ImagePullPolicy == "" {
		out.NodeRegistration.ImagePullPolicy = string(corev1.PullIfNotPresent)
	}
	return out
}

// defaultedJoin applies upstream's webhook defaults that the CRD cannot (imagePullPolicy, the credential
// plugin's apiVersion) to a copy.
func defaultedJoin(in *bootstrapv1.JoinConfiguration) *bootstrapv1.JoinConfiguration {
	out := in.DeepCopy()
	if out.NodeRegistration.ImagePullPolicy == "" {
		out.NodeRegistration.ImagePullPolicy = string(corev1.PullIfNotPresent)
	}
	return out
}

// fillClusterConfiguration fills what the user left empty from the Cluster and the Machine: the control
// plane endpoint, the cluster name, the networks and the Kubernetes version.
func fillClusterConfiguration(cc *bootstrapv1.ClusterConfiguration, cluster *clusterv1.Cluster, version *string) {
	if cc.ControlPlaneEndpoint == "" && cluster.Spec.ControlPlaneEndpoint.IsValid() {
		cc.ControlPlaneEndpoint = cluster.Spec.ControlPlaneEndpoint.String()
	}
	if cc.ClusterName == "" {
		cc.ClusterName = cluster.Name
	}
	if n := cluster.Spec.ClusterNetwork; n != nil {
		if cc.Networking.DNSDomain == "" && n.ServiceDomain != "" {
			cc.Networking.DNSDomain = n.ServiceDomain
		}
		if cc.Networking.ServiceSubnet == "" && n.Services != nil && len(n.Services.CIDRBlocks) > 0 {
			cc.Networking.ServiceSubnet = strings.Join(n.Services.CIDRBlocks, ",")
		}
		if cc.Networking.PodSubnet == "" && n.Pods != nil && len(n.Pods.CIDRBlocks) > 0 {
			cc.Networking.PodSubnet = strings.Join(n.Pods.CIDRBlocks, ",")
		}
	}
	if cc.KubernetesVersion == "" && version != nil {
		cc.KubernetesVersion = *version
	}
}

// fillInput adds to in what every format and step share: the files (certificates first), the users and
// the rest of the spec.
func (r *Reconciler) fillInput(ctx context.Context, s *scope, in *userdata.Input, certFiles []bootstrapv1.File) error {
	spec := &s.config.Spec
	files, err := r.resolveFiles(ctx, s.config, s.cluster)
	if err != nil {
		return err
	}
	users, err := r.resolveUsers(ctx, s.config)
	if err != nil {
		return err
	}
	in.Files = append(certFiles, files...)
	in.Users = users
	in.NTP, in.DiskSetup, in.Mounts = spec.NTP, spec.DiskSetup, spec.Mounts
	in.BootCommands, in.PreKubeadmCommands, in.PostKubeadmCommands = spec.BootCommands, spec.PreKubeadmCommands, spec.PostKubeadmCommands
	in.Verbosity = spec.Verbosity
	return nil
}

// secretValue reads a key of a Secret of the KubeadmConfig's namespace; a missing Secret or key is a
// configError naming what refers to it.
func (r *Reconciler) secretValue(ctx context.Context, namespace, name, key, referrer string) ([]byte, error) {
	secret := &corev1.Secret{}
	ref := client.ObjectKey{Namespace: namespace, Name: name}
	if err := r.Client.Get(ctx, ref, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, configErrorf("Secret %s referenced by %s is not found", ref, referrer)
		}
		return nil, fmt.Errorf("getting the Secret %s referenced by %s: %w", ref, referrer, err)
	}
	data, ok := secret.Data[key]
	if !ok {
		return nil, configErrorf("Secret %s referenced by %s has no key %q", ref, referrer, key)
	}
	return data, nil
}

// resolveFiles returns the spec's files with contentFrom read into content, and those of contentFormat
// Template rendered (upstream v1.14).
func (r *Reconciler) resolveFiles(ctx context.Context, config *bootstrapv1.KubeadmConfig, cluster *clusterv1.Cluster) ([]bootstrapv1.File, error) {
	out := make([]bootstrapv1.File, 0, len(config.Spec.Files))
	for i, f := range config.Spec.Files {
		if f.ContentFrom != nil {
			data, err := r.secretValue(ctx, config.Namespace, f.ContentFrom.Secret.Name, f.ContentFrom.Secret.Key,
				fmt.Sprintf("spec.files[%d].contentFrom (path %s)", i, f.Path))
			if err != nil {
				return nil, err
			}
			f.ContentFrom, f.Content = nil, string(data)
		}
		out = append(out, f)
	}
	if !hasFileTemplates(out) {
		return out, nil
	}
	version, err := r.controlPlaneVersion(ctx, cluster)
	if err != nil {
		return nil, err
	}
	data, err := fileTemplateData(version)
	if err != nil {
		return nil, err
	}
	return renderFileTemplates(out, data)
}

// resolveUsers returns the spec's users with passwdFrom read into passwd.
func (r *Reconciler) resolveUsers(ctx context.Context, config *bootstrapv1.KubeadmConfig) ([]bootstrapv1.User, error) {
	out := make([]bootstrapv1.User, 0, len(config.Spec.Users))
	for i, u := range config.Spec.Users {
		if u.PasswdFrom != nil {
			data, err := r.secretValue(ctx, config.Namespace, u.PasswdFrom.Secret.Name, u.PasswdFrom.Secret.Key,
				fmt.Sprintf("spec.users[%d].passwdFrom (user %s)", i, u.Name))
			if err != nil {
				return nil, err
			}
			u.PasswdFrom, u.Passwd = nil, ptr.To(string(data))
		}
		out = append(out, u)
	}
	return out, nil
}

// reconcileDiscovery completes the join discovery the user left out: a bootstrap token discovery with the
// cluster CA's hashes, the Cluster's endpoint and a new token (or, for a file discovery with a kubeconfig,
// its server and CA).
func (r *Reconciler) reconcileDiscovery(ctx context.Context, s *scope, clusterCerts certs.Certificates) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	d := &s.config.Spec.JoinConfiguration.Discovery
	ca := clusterCerts.Get(clustersecret.ClusterCA)
	if d.File != nil {
		kc := d.File.KubeConfig
		if kc == nil {
			return ctrl.Result{}, nil
		}
		if kc.Cluster == nil {
			kc.Cluster = &bootstrapv1.KubeConfigCluster{}
		}
		if kc.Cluster.Server == "" {
			if !s.cluster.Spec.ControlPlaneEndpoint.IsValid() {
				log.Info("Waiting for the Cluster's spec.controlPlaneEndpoint")
				return ctrl.Result{RequeueAfter: r.WaitInterval}, nil
			}
			kc.Cluster.Server = "https://" + s.cluster.Spec.ControlPlaneEndpoint.String()
		}
		if len(kc.Cluster.CertificateAuthorityData) == 0 {
			kc.Cluster.CertificateAuthorityData = ca.Cert
		}
		return ctrl.Result{}, nil
	}
	if d.BootstrapToken == nil {
		d.BootstrapToken = &bootstrapv1.BootstrapTokenDiscovery{}
	}
	bt := d.BootstrapToken
	if len(bt.CACertHashes) == 0 {
		hashes, err := ca.Hashes()
		if err != nil {
			return ctrl.Result{}, err
		}
		bt.CACertHashes = hashes
	}
	if bt.APIServerEndpoint == "" {
		if !s.cluster.Spec.ControlPlaneEndpoint.IsValid() {
			log.Info("Waiting for the Cluster's spec.controlPlaneEndpoint")
			return ctrl.Result{RequeueAfter: r.WaitInterval}, nil
		}
		bt.APIServerEndpoint = s.cluster.Spec.ControlPlaneEndpoint.String()
	}
	if bt.Token == "" {
		workload, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
		if err != nil {
			if errors.Is(err, clustercache.ErrClusterNotConnected) {
				log.Info("Waiting for the connection to the workload cluster to create a bootstrap token")
				return ctrl.Result{RequeueAfter: r.WaitInterval}, nil
			}
			return ctrl.Result{}, err
		}
		token, err := createToken(ctx, workload, r.Now().Add(r.TokenTTL))
		if err != nil {
			return ctrl.Result{}, err
		}
		log.Info("Created a bootstrap token in the workload cluster", "Secret", klog.KRef(metav1.NamespaceSystem, tokenSecretName(token)))
		bt.Token = token
	}
	return ctrl.Result{}, nil
}

// render renders and stores the bootstrap data.
func (r *Reconciler) render(ctx context.Context, s *scope, in *userdata.Input) error {
	if s.config.Spec.Format == bootstrapv1.Ignition && !r.FeatureGates.Enabled(feature.KubeadmBootstrapFormatIgnition) {
		return configErrorf("spec.format is ignition, which needs the KubeadmBootstrapFormatIgnition feature gate: start the bootstrap provider with " +
			"--feature-gates=KubeadmBootstrapFormatIgnition=true (clusterctl init: EXP_KUBEADM_BOOTSTRAP_FORMAT_IGNITION=true), or use cloud-config")
	}
	data, warnings, err := userdata.Render(s.config.Spec.Format, in, s.config.Spec.Ignition)
	if err != nil {
		// What cannot be rendered is in the spec: an invalid additionalConfig, mount, encoding...
		return &configError{msg: "Rendering the bootstrap data: " + err.Error()}
	}
	if len(warnings) > 0 {
		ctrl.LoggerFrom(ctx).Info("Warnings about spec.ignition.containerLinuxConfig.additionalConfig", "warnings", warnings)
	}
	return r.storeData(ctx, s, data)
}

// storeData writes the bootstrap data Secret, `<config>`, owned by the KubeadmConfig.
func (r *Reconciler) storeData(ctx context.Context, s *scope, data []byte) error {
	hash, err := specHash(&s.config.Spec)
	if err != nil {
		return err
	}
	format := s.config.Spec.Format
	if format == "" {
		format = bootstrapv1.CloudConfig
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       s.config.Namespace,
			Name:            s.config.Name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name},
			Annotations:     map[string]string{SpecHashAnnotation: hash},
			OwnerReferences: []metav1.OwnerReference{configOwnerRef(s.config)},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": data, "format": []byte(format)},
	}
	if err := r.Client.Create(ctx, secret); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the bootstrap data Secret %s: %w", client.ObjectKeyFromObject(secret), err)
		}
		ctrl.LoggerFrom(ctx).Info("Updating the bootstrap data Secret", "Secret", klog.KObj(secret))
		if err := r.Client.Update(ctx, secret); err != nil {
			return fmt.Errorf("updating the bootstrap data Secret %s: %w", client.ObjectKeyFromObject(secret), err)
		}
	}
	s.facts.data, s.facts.dataSecretName = dataAvailable, secret.Name
	return nil
}

// secretCache reads the Secrets labelled with a cluster name: the SecretCache, or the Client without one.
func (r *Reconciler) secretCache() client.Reader {
	if r.SecretCache != nil {
		return r.SecretCache
	}
	return r.Client
}

func configOwnerRef(config *bootstrapv1.KubeadmConfig) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: config.Name, UID: config.UID, Controller: ptr.To(true),
	}
}

// ensureDataSecretOwner makes the KubeadmConfig the controller of its bootstrap data Secret, which a move or
// a restore may have left with another (or no) controller. The Secret is looked up in the SecretCache only:
// it carries the cluster-name label, and until the data is rendered it does not exist, so that a read
// through the Client would go to the API server at every reconcile of a Machine waiting for its
// infrastructure or its control plane. A Secret the cache has not seen yet is looked at by a later
// reconcile.
func (r *Reconciler) ensureDataSecretOwner(ctx context.Context, s *scope) error {
	secret := &corev1.Secret{}
	if err := r.secretCache().Get(ctx, client.ObjectKey{Namespace: s.config.Namespace, Name: s.config.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting the bootstrap data Secret: %w", err)
	}
	want := configOwnerRef(s.config)
	var refs []metav1.OwnerReference
	found := false
	for _, ref := range secret.OwnerReferences {
		switch {
		case ref.UID == want.UID:
			found = ref.Controller != nil && *ref.Controller
			if !found {
				continue
			}
		case ref.Controller != nil && *ref.Controller:
			continue // another controller: replaced
		}
		refs = append(refs, ref)
	}
	if found && len(refs) == len(secret.OwnerReferences) {
		return nil
	}
	if !found {
		refs = append(refs, want)
	}
	before := secret.DeepCopy()
	secret.OwnerReferences = refs
	if err := r.Client.Patch(ctx, secret, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("setting the owner of the bootstrap data Secret: %w", err)
	}
	return nil
}
