// Package repositorytest serves, on loopback, stand-ins for the hosts clusterctl talks to: GitHub release
// downloads (github.com and objects.githubusercontent.com), the GitHub REST API (api.github.com),
// raw.githubusercontent.com, the Go module proxy (proxy.golang.org or any host given in GOPROXY) and
// GitLab package registries (gitlab.*). Server.Client returns an HTTP client that sends every request to
// the stand-in, so tests never reach the network; rate limits, failures and private repositories are
// switches of the Server.
package repositorytest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the stand-in for GitHub, the Go module proxy and GitLab.
type Server struct {
	srv *httptest.Server

	mu          sync.Mutex
	repos       map[string]*repo
	modules     map[string][]string
	gitlab      map[string][]byte
	gitlabToken string
	urls        map[string][]byte
	token       string
	rateLimited bool
	failures    map[string]int
	stalled     []string
	done        chan struct{}
	requests    []string
	nextID      int64
}

type repo struct {
	private  bool
	releases []*release
	files    map[string]map[string][]byte // ref -> path -> content
}

type release struct {
	id     int64
	tag    string
	draft  bool
	assets []*asset
}

type asset struct {
	id      int64
	name    string
	content []byte
}

// NewServer starts a Server that stops when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{
		repos:    map[string]*repo{},
		modules:  map[string][]string{},
		gitlab:   map[string][]byte{},
		urls:     map[string][]byte{},
		failures: map[string]int{},
		done:     make(chan struct{}),
		nextID:   100,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
}

// Client returns an HTTP client whose requests, to any host, are served by s.
func (s *Server) Client() *http.Client {
	target, _ := url.Parse(s.srv.URL)
	return &http.Client{Transport: &rewrite{target: target}, Timeout: 10 * time.Second}
}

type rewrite struct{ target *url.URL }

func (r *rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Host = req.URL.Host
	out.URL.Scheme = r.target.Scheme
	out.URL.Host = r.target.Host
	return http.DefaultTransport.RoundTrip(out)
}

// AddRelease publishes a release of github.com/{owner}/{name} with the given assets.
func (s *Server) AddRelease(owner, name, tag string, assets map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(owner, name)
	rel := &release{id: s.id(), tag: tag}
	names := slices.Sorted(maps.Keys(assets))
	for _, n := range names {
		rel.assets = append(rel.assets, &asset{id: s.id(), name: n, content: assets[n]})
	}
	r.releases = append(r.releases, rel)
}

// AddDraftRelease adds a draft release, which the API lists to the owner only.
func (s *Server) AddDraftRelease(owner, name, tag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, name).releases = append(s.repo(owner, name).releases, &release{id: s.id(), tag: tag, draft: true})
}

// AddFile adds a file at a branch of github.com/{owner}/{name}, served by raw.githubusercontent.com and
// the contents API.
func (s *Server) AddFile(owner, name, ref, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(owner, name)
	if r.files[ref] == nil {
		r.files[ref] = map[string][]byte{}
	}
	r.files[ref][path] = content
}

// SetPrivate makes a repository private: plain downloads answer 404 and the API wants the token.
func (s *Server) SetPrivate(owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, name).private = true
}

// SetToken sets the token that private repositories accept.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetRateLimited makes the GitHub API answer with rate limit errors.
func (s *Server) SetRateLimited(limited bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimited = limited
}

// SetModuleVersions sets what the Go module proxy lists for a module path (for example
// "github.com/org/repo" or "github.com/org/repo/v2").
func (s *Server) SetModuleVersions(modulePath string, versions ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modules[modulePath] = versions
}

// AddURL serves content at rawURL ("https://example.com/path"), whatever the host.
func (s *Server) AddURL(rawURL string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	s.urls[u.Host+u.Path] = content
}

// AddGitLabFile publishes a file of a GitLab generic package: path is
// "{projectSlug}/{package}/{version}/{file}" with the slug escaped as in URLs (group%2Fproject).
func (s *Server) AddGitLabFile(path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gitlab[path] = content
}

// SetGitLabToken sets the Private-Token that GitLab requires; empty requires none.
func (s *Server) SetGitLabToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gitlabToken = token
}

// FailNext makes the next n requests whose "host/path" starts with prefix fail with 503.
func (s *Server) FailNext(prefix string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[prefix] = n
}

// Stall makes requests whose host and path start with prefix (for example
// "github.com/owner/repo/releases/download/") get no answer until the client gives up or the test ends.
func (s *Server) Stall(prefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = append(s.stalled, prefix)
}

// Requests returns "host/path" of every request served so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count returns how many requests served so far start with prefix ("host/path").
func (s *Server) Count(prefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func (s *Server) repo(owner, name string) *repo {
	key := strings.ToLower(owner + "/" + name)
	r, ok := s.repos[key]
	if !ok {
		r = &repo{files: map[string]map[string][]byte{}}
		s.repos[key] = r
	}
	return r
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Host + r.URL.Path
	s.mu.Lock()
	s.requests = append(s.requests, key)
	for prefix, n := range s.failures {
		if n > 0 && strings.HasPrefix(key, prefix) {
			s.failures[prefix] = n - 1
			s.mu.Unlock()
			http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
			return
		}
	}
	if slices.ContainsFunc(s.stalled, func(p string) bool { return strings.HasPrefix(key, p) }) {
		s.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	defer s.mu.Unlock()

	if content, ok := s.urls[key]; ok {
		_, _ = w.Write(content)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Host == "github.com":
		s.serveDownload(w, parts)
	case r.Host == "objects.githubusercontent.com":
		s.serveObject(w, parts)
	case r.Host == "api.github.com":
		s.serveAPI(w, r, parts)
	case r.Host == "raw.githubusercontent.com":
		s.serveRaw(w, parts)
	case strings.HasPrefix(r.Host, "gitlab."):
		s.serveGitLab(w, r)
	default:
		s.serveGoProxy(w, r)
	}
}

// serveDownload serves https://github.com/{owner}/{repo}/releases/download/{tag}/{name}.
func (s *Server) serveDownload(w http.ResponseWriter, parts []string) {
	if len(parts) != 6 || parts[2] != "releases" || parts[3] != "download" {
		http.NotFound(w, nil)
		return
	}
	r := s.repos[strings.ToLower(parts[0]+"/"+parts[1])]
	if r == nil || r.private {
		http.NotFound(w, nil)
		return
	}
	for _, rel := range r.releases {
		if rel.tag != parts[4] || rel.draft {
			continue
		}
		for _, a := range rel.assets {
			if a.name == parts[5] {
				_, _ = w.Write(a.content)
				return
			}
		}
	}
	http.NotFound(w, nil)
}

// serveObject serves the redirect targets of API asset downloads: /assets/{id}.
func (s *Server) serveObject(w http.ResponseWriter, parts []string) {
	if len(parts) == 2 && parts[0] == "assets" {
		for _, r := range s.repos {
			for _, rel := range r.releases {
				for _, a := range rel.assets {
					if strconv.FormatInt(a.id, 10) == parts[1] {
						_, _ = w.Write(a.content)
						return
					}
				}
			}
		}
	}
	http.NotFound(w, nil)
}

func (s *Server) serveAPI(w http.ResponseWriter, req *http.Request, parts []string) {
	if s.rateLimited {
		w.Header().Set("X-RateLimit-Limit", "60")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"API rate limit exceeded.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`))
		return
	}
	if len(parts) < 4 || parts[0] != "repos" {
		apiNotFound(w)
		return
	}
	r := s.repos[strings.ToLower(parts[1]+"/"+parts[2])]
	if r == nil || (r.private && (s.token == "" || req.Header.Get("Authorization") != "Bearer "+s.token)) {
		apiNotFound(w)
		return
	}
	owner, name := parts[1], parts[2]
	switch {
	case len(parts) == 4 && parts[3] == "releases":
		s.listReleases(w, req, owner, name, r)
	case len(parts) == 6 && parts[3] == "releases" && parts[4] == "tags":
		for _, rel := range r.releases {
			if rel.tag == parts[5] && !rel.draft {
				writeJSON(w, releaseJSON(rel))
				return
			}
		}
		apiNotFound(w)
	case len(parts) == 6 && parts[3] == "releases" && parts[4] == "assets":
		for _, rel := range r.releases {
			for _, a := range rel.assets {
				if strconv.FormatInt(a.id, 10) == parts[5] {
					w.Header().Set("Location", fmt.Sprintf("https://objects.githubusercontent.com/assets/%d", a.id))
					w.WriteHeader(http.StatusFound)
					return
				}
			}
		}
		apiNotFound(w)
	case len(parts) >= 5 && parts[3] == "contents":
		content, ok := r.files[req.URL.Query().Get("ref")][strings.Join(parts[4:], "/")]
		if !ok {
			apiNotFound(w)
			return
		}
		writeJSON(w, map[string]any{
			"type": "file", "encoding": "base64", "name": parts[len(parts)-1], "path": strings.Join(parts[4:], "/"),
			"content": base64.StdEncoding.EncodeToString(content),
		})
	default:
		apiNotFound(w)
	}
}

func (s *Server) listReleases(w http.ResponseWriter, req *http.Request, owner, name string, r *repo) {
	perPage, _ := strconv.Atoi(req.URL.Query().Get("per_page"))
	if perPage <= 0 {
		perPage = 30
	}
	page, _ := strconv.Atoi(req.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	var visible []*release
	for _, rel := range r.releases {
		if !rel.draft || s.token != "" && req.Header.Get("Authorization") == "Bearer "+s.token {
			visible = append(visible, rel)
		}
	}
	start, end := (page-1)*perPage, page*perPage
	start, end = min(start, len(visible)), min(end, len(visible))
	if end < len(visible) {
		w.Header().Set("Link", fmt.Sprintf(`<https://api.github.com/repos/%s/%s/releases?per_page=%d&page=%d>; rel="next"`, owner, name, perPage, page+1))
	}
	out := make([]any, 0, end-start)
	for _, rel := range visible[start:end] {
		out = append(out, releaseJSON(rel))
	}
	writeJSON(w, out)
}

func releaseJSON(rel *release) map[string]any {
	assets := make([]any, 0, len(rel.assets))
	for _, a := range rel.assets {
		assets = append(assets, map[string]any{"id": a.id, "name": a.name})
	}
	return map[string]any{"id": rel.id, "tag_name": rel.tag, "draft": rel.draft, "assets": assets}
}

// serveRaw serves https://raw.githubusercontent.com/{owner}/{repo}/{ref}/{path}.
func (s *Server) serveRaw(w http.ResponseWriter, parts []string) {
	if len(parts) < 4 {
		http.NotFound(w, nil)
		return
	}
	r := s.repos[strings.ToLower(parts[0]+"/"+parts[1])]
	if r == nil || r.private {
		http.NotFound(w, nil)
		return
	}
	content, ok := r.files[parts[2]][strings.Join(parts[3:], "/")]
	if !ok {
		http.NotFound(w, nil)
		return
	}
	_, _ = w.Write(content)
}

// serveGitLab serves /api/v4/projects/{slug}/packages/generic/{package}/{version}/{file}.
func (s *Server) serveGitLab(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.Trim(req.URL.EscapedPath(), "/"), "/")
	if len(parts) < 9 || strings.Join(parts[:3], "/") != "api/v4/projects" || parts[4] != "packages" || parts[5] != "generic" {
		http.NotFound(w, nil)
		return
	}
	if s.gitlabToken != "" && req.Header.Get("Private-Token") != s.gitlabToken {
		http.Error(w, `{"message":"401 Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	content, ok := s.gitlab[parts[3]+"/"+strings.Join(parts[6:], "/")]
	if !ok {
		http.NotFound(w, nil)
		return
	}
	_, _ = w.Write(content)
}

// serveGoProxy serves /{module}/@v/list.
func (s *Server) serveGoProxy(w http.ResponseWriter, req *http.Request) {
	path, ok := strings.CutSuffix(strings.TrimPrefix(req.URL.Path, "/"), "/@v/list")
	if !ok {
		http.NotFound(w, nil)
		return
	}
	module := unescapeModule(path)
	versions, ok := s.modules[module]
	if !ok {
		http.Error(w, "not found: module "+module, http.StatusNotFound)
		return
	}
	_, _ = w.Write([]byte(strings.Join(versions, "\n") + "\n"))
}

// unescapeModule undoes the Go module proxy's case escaping ("!a" is "A").
func unescapeModule(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '!' && i+1 < len(p) {
			b.WriteString(strings.ToUpper(string(p[i+1])))
			i++
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func apiNotFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"message":"Not Found"}`))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
