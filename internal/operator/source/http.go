package source

import (
	"time"

	"github.com/capstan-dev/capstan/internal/httpclient"
)

// DefaultHTTPLimits bound every download of a release (GitHub, GitLab, http(s) folders, OCI registries)
// when nothing else is said: 10 seconds to connect, 2 minutes for each call, response bodies of up to
// 64 MiB (the largest provider components, with their CRDs, are a few MiB). They are the defaults of the
// operator's --fetch-connect-timeout, --fetch-timeout and --fetch-max-size.
var DefaultHTTPLimits = httpclient.Limits{ConnectTimeout: 10 * time.Second, Timeout: 2 * time.Minute, MaxResponseBytes: 64 << 20}
