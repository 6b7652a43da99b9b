package controllermanager

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/apiserver/pkg/server/routes"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The paths of the diagnostics endpoint besides /metrics, as upstream Cluster API serves them.
const (
	// FlagsVPath changes the log verbosity at runtime (PUT, the body is the new level).
	FlagsVPath = "/debug/flags/v"
	// PprofPath is the index of Go's profiles.
	PprofPath = "/debug/pprof/"
)

// maxVerbosity is the highest log verbosity: controller-runtime's zap logger maps verbosity v to the zap
// level -v, an int8.
const maxVerbosity = 127

// addDiagnosticsFlags registers upstream Cluster API's diagnostics and TLS flags (util/flags.ManagerOptions)
// and the deprecated --metrics-bind-addr.
func (o *Options) addDiagnosticsFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DiagnosticsAddress, "diagnostics-address", o.DiagnosticsAddress,
		"Address of the diagnostics endpoint. By default it serves /metrics over HTTPS with authentication (TokenReview) and authorization "+
			"(SubjectAccessReview), and also "+PprofPath+"* and PUT "+FlagsVPath+" (the log verbosity). With --insecure-diagnostics it serves "+
			"only /metrics, over HTTP and to anyone. 0 disables it.")
	fs.BoolVar(&o.InsecureDiagnostics, "insecure-diagnostics", o.InsecureDiagnostics,
		"Serve the diagnostics endpoint over HTTP without authentication or authorization: metrics only, pprof and the log level endpoints are disabled.")
	fs.StringVar(&o.MetricsBindAddr, "metrics-bind-addr", o.MetricsBindAddr,
		"Address of a plain HTTP /metrics endpoint without authentication, served instead of the diagnostics endpoint; 0 disables metrics.")
	_ = fs.MarkDeprecated("metrics-bind-addr", "use --diagnostics-address instead; to keep serving metrics over HTTP without "+
		"authentication or authorization, set --insecure-diagnostics as well")
	fs.StringVar(&o.TLSMinVersion, "tls-min-version", o.TLSMinVersion,
		"Minimum TLS version of the diagnostics endpoint (unless --insecure-diagnostics) and of the webhook server. Possible values are "+
			strings.Join(cliflag.TLSPossibleVersions(), ", ")+".")
	fs.StringSliceVar(&o.TLSCipherSuites, "tls-cipher-suites", o.TLSCipherSuites,
		"Comma-separated cipher suites of the diagnostics endpoint (unless --insecure-diagnostics) and of the webhook server; Go's defaults when empty. "+
			"Preferred values: "+strings.Join(cliflag.PreferredTLSCipherNames(), ", ")+". "+
			"Insecure values: "+strings.Join(cliflag.InsecureTLSCipherNames(), ", ")+".")
	fs.StringVar(&o.ProfilerAddress, "profiler-address", o.ProfilerAddress,
		"Address of a plain HTTP pprof endpoint without authentication (for example localhost:6060); disabled when empty. "+
			"The diagnostics endpoint serves pprof with authentication.")
}

// TLSOptions returns the TLS settings of --tls-min-version and --tls-cipher-suites, for the diagnostics
// endpoint and the webhook server.
func (o *Options) TLSOptions() ([]func(*tls.Config), error) {
	version, err := cliflag.TLSVersion(o.TLSMinVersion)
	if err != nil {
		return nil, fmt.Errorf("--tls-min-version: %w", err)
	}
	opts := []func(*tls.Config){func(c *tls.Config) { c.MinVersion = version }}
	if len(o.TLSCipherSuites) > 0 {
		suites, err := cliflag.TLSCipherSuites(o.TLSCipherSuites)
		if err != nil {
			return nil, fmt.Errorf("--tls-cipher-suites: %w", err)
		}
		opts = append(opts, func(c *tls.Config) { c.CipherSuites = suites })
	}
	return opts, nil
}

// metricsServerOptions returns the options of controller-runtime's metrics server, which serves the
// diagnostics endpoint:
//   - --metrics-bind-addr given (deprecated): plain HTTP metrics on that address, as before
//     --diagnostics-address existed;
//   - --insecure-diagnostics: plain HTTP metrics on --diagnostics-address, nothing else;
//   - otherwise: HTTPS on --diagnostics-address with a self-signed certificate, every request authenticated
//     with a TokenReview and authorized with a SubjectAccessReview on its path (a non-resource URL) and
//     verb, serving /metrics, pprof and the log verbosity.
func (o *Options) metricsServerOptions() (metricsserver.Options, error) {
	tlsOpts, err := o.TLSOptions()
	if err != nil {
		return metricsserver.Options{}, err
	}
	switch {
	case o.MetricsBindAddr != "":
		return metricsserver.Options{BindAddress: o.MetricsBindAddr}, nil
	case o.InsecureDiagnostics:
		return metricsserver.Options{BindAddress: o.DiagnosticsAddress}, nil
	}
	return metricsserver.Options{
		BindAddress:    o.DiagnosticsAddress,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
		TLSOpts:        tlsOpts,
		ExtraHandlers: map[string]http.Handler{
			FlagsVPath:            routes.StringFlagPutHandler(o.setVerbosity),
			PprofPath:             http.HandlerFunc(pprof.Index),
			PprofPath + "cmdline": http.HandlerFunc(pprof.Cmdline),
			PprofPath + "profile": http.HandlerFunc(pprof.Profile),
			PprofPath + "symbol":  http.HandlerFunc(pprof.Symbol),
			PprofPath + "trace":   http.HandlerFunc(pprof.Trace),
		},
	}, nil
}

// setVerbosity is PUT /debug/flags/v: it sets klog's verbosity (client-go's logs), as upstream does, and the
// level of the manager's own logger (the controllers' logs), which SetupLogging made adjustable.
func (o *Options) setVerbosity(value string) (string, error) {
	value = strings.TrimSpace(value)
	v, err := strconv.Atoi(value)
	if err != nil || v < 0 || v > maxVerbosity {
		return "", fmt.Errorf("invalid log verbosity %q: give a number from 0 to %d", value, maxVerbosity)
	}
	msg, err := logs.GlogSetter(value)
	if err != nil {
		return "", err
	}
	if o.level != nil {
		o.level.SetLevel(zapcore.Level(-v))
	}
	return msg, nil
}
