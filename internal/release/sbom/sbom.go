// Package sbom writes the software bill of materials of capstan's image: an SPDX 2.3 document
// (github.com/spdx/tools-golang) that lists, for the capstan binary of each platform, the Go modules and
// the Go standard library it was built from, read from the binary's build information (debug/buildinfo),
// so the list is what the binary really contains.
package sbom

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdx/v2/common"
)

// MediaType is the media type of the document (cosign's name for SPDX JSON).
const MediaType = "text/spdx+json"

// PredicateType is the in-toto predicate type of an SPDX document in an attestation.
const PredicateType = "https://spdx.dev/Document"

const noAssertion = "NOASSERTION"

// Binary is a built binary the document describes.
type Binary struct {
	// Platform is os/arch, for example linux/amd64.
	Platform string
	// Path is the binary's file.
	Path string
}

// Options describe the document.
type Options struct {
	// Name names what the document describes, for example the image repository.
	Name string
	// Version is the release version; it is the version of the binaries' main module.
	Version string
	// Created is the document's creation time.
	Created time.Time
	// Binaries are the binaries to describe.
	Binaries []Binary
}

// Module is a Go module a binary was built from.
type Module struct {
	Path    string
	Version string
}

// Build returns the SPDX document of the binaries.
func Build(o Options) (*spdx.Document, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("no binaries to describe")
	}
	doc := &spdx.Document{
		SPDXVersion:    spdx.Version,
		DataLicense:    spdx.DataLicense,
		SPDXIdentifier: "DOCUMENT",
		DocumentName:   o.Name + "-" + o.Version,
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "capstan-release"}, {CreatorType: "Organization", Creator: "capstan"}},
			Created:  o.Created.UTC().Format(time.RFC3339),
		},
	}
	modules := map[string]*spdx.Package{}
	namespace := sha256.New()
	for _, b := range o.Binaries {
		bi, err := buildinfo.ReadFile(b.Path)
		if err != nil {
			return nil, fmt.Errorf("reading the Go build information of %s: %w", b.Path, err)
		}
		sum, err := fileSHA256(b.Path)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(namespace, "%s %s\n", b.Platform, sum)
		goos, goarch, _ := strings.Cut(b.Platform, "/")
		main := &spdx.Package{
			PackageName:             bi.Path,
			PackageSPDXIdentifier:   binaryID(b.Platform),
			PackageVersion:          o.Version,
			PackageFileName:         bi.Path,
			PackageDownloadLocation: noAssertion,
			PackageChecksums:        []common.Checksum{{Algorithm: common.SHA256, Value: sum}},
			PackageLicenseConcluded: noAssertion,
			PackageLicenseDeclared:  noAssertion,
			PackageCopyrightText:    noAssertion,
			PrimaryPackagePurpose:   "APPLICATION",
			PackageComment:          fmt.Sprintf("The %s binary of platform %s, built with %s", bi.Path, b.Platform, bi.GoVersion),
			PackageExternalReferences: []*spdx.PackageExternalReference{
				purlRef(bi.Main.Path, o.Version, "goos="+goos+"&goarch="+goarch),
			},
		}
		doc.Packages = append(doc.Packages, main)
		doc.Relationships = append(doc.Relationships, relationship("DOCUMENT", main.PackageSPDXIdentifier, "DESCRIBES"))

		deps := []Module{{Path: "stdlib", Version: strings.TrimPrefix(bi.GoVersion, "go")}}
		for _, d := range bi.Deps {
			m := Module{Path: d.Path, Version: d.Version}
			if d.Replace != nil {
				m = Module{Path: d.Replace.Path, Version: d.Replace.Version}
				if m.Version == "" {
					// A replacement by a directory: source of the same repository as the main module.
					m = Module{Path: d.Path, Version: o.Version}
				}
			}
			deps = append(deps, m)
		}
		for _, m := range deps {
			key := m.Path + "@" + m.Version
			p, ok := modules[key]
			if !ok {
				p = modulePackage(m)
				modules[key] = p
			}
			doc.Relationships = append(doc.Relationships, relationship(main.PackageSPDXIdentifier, p.PackageSPDXIdentifier, "DEPENDS_ON"))
		}
	}
	keys := slices.Sorted(maps.Keys(modules))
	for _, k := range keys {
		doc.Packages = append(doc.Packages, modules[k])
	}
	doc.DocumentNamespace = fmt.Sprintf("https://spdx.org/spdxdocs/%s-%s-%s", sanitize(o.Name), o.Version, hex.EncodeToString(namespace.Sum(nil))[:16])
	return doc, nil
}

// JSON returns the document as SPDX JSON.
func JSON(doc *spdx.Document) ([]byte, error) {
	var buf bytes.Buffer
	if err := spdxjson.Write(doc, &buf, spdxjson.Indent("  ")); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Read parses an SPDX JSON document.
func Read(r io.Reader) (*spdx.Document, error) { return spdxjson.Read(r) }

// Modules returns the Go modules (path@version, "stdlib@<go version>" for the standard library) that
// the document says the binary of platform depends on.
func Modules(doc *spdx.Document, platform string) []string {
	byID := map[common.ElementID]*spdx.Package{}
	for _, p := range doc.Packages {
		byID[p.PackageSPDXIdentifier] = p
	}
	binary := binaryID(platform)
	var out []string
	for _, r := range doc.Relationships {
		if r.Relationship == "DEPENDS_ON" && r.RefA.ElementRefID == binary {
			if p, ok := byID[r.RefB.ElementRefID]; ok {
				out = append(out, p.PackageName+"@"+p.PackageVersion)
			}
		}
	}
	sort.Strings(out)
	return out
}

func modulePackage(m Module) *spdx.Package {
	p := &spdx.Package{
		PackageName:               m.Path,
		PackageSPDXIdentifier:     spdxID("go-module", m.Path, m.Version),
		PackageVersion:            m.Version,
		PackageDownloadLocation:   noAssertion,
		PackageLicenseConcluded:   noAssertion,
		PackageLicenseDeclared:    noAssertion,
		PackageCopyrightText:      noAssertion,
		PrimaryPackagePurpose:     "LIBRARY",
		PackageExternalReferences: []*spdx.PackageExternalReference{purlRef(m.Path, m.Version, "")},
	}
	if m.Path == "stdlib" {
		p.PackageComment = "The Go standard library"
	}
	return p
}

// purlRef returns the package URL reference of a Go module (https://github.com/package-url/purl-spec).
func purlRef(path, version, qualifiers string) *spdx.PackageExternalReference {
	segments := strings.Split(path, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	purl := "pkg:golang/" + strings.Join(segments, "/") + "@" + url.PathEscape(version)
	purl = strings.ReplaceAll(purl, "+", "%2B")
	if qualifiers != "" {
		purl += "?" + qualifiers
	}
	return &spdx.PackageExternalReference{Category: common.CategoryPackageManager, RefType: common.TypePackageManagerPURL, Locator: purl}
}

func relationship(a, b common.ElementID, kind string) *spdx.Relationship {
	return &spdx.Relationship{
		RefA:         common.DocElementID{ElementRefID: a},
		RefB:         common.DocElementID{ElementRefID: b},
		Relationship: kind,
	}
}

// binaryID is the element ID of the binary of a platform.
func binaryID(platform string) common.ElementID { return spdxID("binary", platform) }

var notIDChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// spdxID returns an element ID of the parts: SPDX IDs allow letters, digits, '.' and '-'.
func spdxID(parts ...string) common.ElementID {
	return common.ElementID("Package-" + sanitize(strings.Join(parts, "-")))
}

func sanitize(s string) string { return notIDChars.ReplaceAllString(s, "-") }

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
