package image

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The non-root user the image runs as, as in distroless images ("nonroot").
const (
	UID  = 65532
	GID  = 65532
	User = "65532:65532"
)

// BinaryPath is where the capstan binary lives in the image; the providers' Deployments run it as their
// command.
const BinaryPath = "/capstan"

// CACertificatesPath is the CA bundle of the image, where Go's crypto/x509 looks on Linux.
const CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"

// baseFiles returns the files of the image besides the binary: what a distroless "static" base carries
// and a Go program uses. They are written here rather than pulled from a base image, so building needs
// no registry.
func baseFiles() []file {
	return []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
				fmt.Sprintf("nonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, GID))},
		{name: "etc/group", mode: 0o644, data: []byte(
			"root:x:0:\nnobody:x:65534:\n" + fmt.Sprintf("nonroot:x:%d:\n", GID))},
		// Go's resolver reads the order of hosts lookups here.
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: CACertificatesPath[1:], mode: 0o644, data: caBundle()},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true, uid: UID, gid: GID},
		{name: "root/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
}

// caBundle returns the Mozilla (NSS) root certificates that golang.org/x/crypto/x509roots/fallback
// carries, as PEM. Roots with constraints a PEM file cannot express (distrust after a date) are left out.
func caBundle() []byte {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})
	}
	return buf.Bytes()
}

// file is an entry of the image's file system.
type file struct {
	name     string
	mode     int64
	dir      bool
	uid, gid int
	data     []byte
	// path is a file on disk whose content is copied, when data is nil.
	path string
}

// rootfs writes the tar of the files, each with the time modTime, so that the same inputs give the same
// layer digest.
func rootfs(files []file, modTime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{
			Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid, ModTime: modTime, Format: tar.FormatPAX,
		}
		if f.dir {
			hdr.Typeflag = tar.TypeDir
			if err := tw.WriteHeader(hdr); err != nil {
				return nil, err
			}
			continue
		}
		hdr.Typeflag = tar.TypeReg
		var content io.Reader = bytes.NewReader(f.data)
		hdr.Size = int64(len(f.data))
		if f.data == nil && f.path != "" {
			fh, err := os.Open(f.path)
			if err != nil {
				return nil, err
			}
			defer func() { _ = fh.Close() }()
			st, err := fh.Stat()
			if err != nil {
				return nil, err
			}
			hdr.Size = st.Size()
			content = fh
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := io.Copy(tw, content); err != nil {
			return nil, fmt.Errorf("adding %s to the image: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
