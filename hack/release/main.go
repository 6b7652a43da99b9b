// Command release builds capstan's release (`make image`, `make release`):
//
//	go run ./hack/release image -version v0.1.0 -out out [-platforms linux/amd64,linux/arm64] [-key out/cosign.key] [-repo REPO -push]
//	go run ./hack/release directory -version v0.1.0 -out out [-repo REPO] [-pub out/cosign.pub]
//	go run ./hack/release verify -version v0.1.0 -pub out/cosign.pub (-layout out/image | -repo REPO)
//
// See docs/release.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/release/dist"
	"github.com/capstan-dev/capstan/internal/release/image"
	"github.com/capstan-dev/capstan/internal/release/signature"
)

const usage = "usage: release image|directory|verify [flags]; see docs/release.md"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "image":
		return runImage(ctx, args[1:])
	case "directory":
		return runDirectory(args[1:])
	case "verify":
		return runVerify(ctx, args[1:])
	default:
		return fmt.Errorf("unknown command %q. %s", args[0], usage)
	}
}

// paths are the files of a build under -out.
type paths struct{ out string }

func (p paths) layout() string  { return filepath.Join(p.out, "image") }
func (p paths) sbom() string    { return filepath.Join(p.out, dist.SBOMFile) }
func (p paths) key() string     { return filepath.Join(p.out, "cosign.key") }
func (p paths) pub() string     { return filepath.Join(p.out, "cosign.pub") }
func (p paths) release() string { return filepath.Join(p.out, "release") }
func (p paths) work() string    { return filepath.Join(p.out, "bin") }

func runImage(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	version := fs.String("version", release.Version(), "Release version: the image tag and the binary's version.")
	revision := fs.String("revision", "", "Git commit of the source (the org.opencontainers.image.revision label).")
	created := fs.String("created", os.Getenv("SOURCE_DATE_EPOCH"), "Creation time of the image, in seconds since the epoch (SOURCE_DATE_EPOCH); 0 when empty.")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "Comma-separated platforms of the image.")
	out := fs.String("out", "out", "Output directory: image/ (OCI layout), capstan.spdx.json, cosign.pub.")
	key := fs.String("key", "", "cosign private key file to sign with (password in COSIGN_PASSWORD, which must not be empty); <out>/cosign.key by default. Created when missing, except with -push, which needs an existing key.")
	repo := fs.String("repo", "", "Image repository, as the signatures name it and where -push pushes ("+release.Image+" when empty).")
	push := fs.Bool("push", false, "Push the image, its signatures and its SBOM attestation to -repo.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := paths{out: *out}
	plats, err := image.ParsePlatforms(*platforms)
	if err != nil {
		return err
	}
	when, err := parseEpoch(*created)
	if err != nil {
		return err
	}
	if *push && *repo == "" {
		return errors.New("-push needs -repo (IMAGE_REPO): the repository to push to")
	}
	keyFile := *key
	if keyFile == "" {
		keyFile = p.key()
	}
	signer, err := dist.SigningKey(dist.KeyOptions{Path: keyFile, PublicKeyPath: p.pub(),
		Password: []byte(os.Getenv("COSIGN_PASSWORD")), Publishing: *push, Log: os.Stderr})
	if err != nil {
		return err
	}
	module, err := os.Getwd()
	if err != nil {
		return err
	}
	img, err := dist.BuildImage(ctx, dist.ImageOptions{
		Module: module, Version: *version, Revision: *revision, Created: when, Platforms: plats,
		Repository: *repo, Signer: signer, WorkDir: p.work(), Log: os.Stderr,
	})
	if err != nil {
		return err
	}
	if err := image.WriteLayout(p.layout(), img.Entries...); err != nil {
		return err
	}
	if err := os.WriteFile(p.sbom(), img.SBOM, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: OCI image layout of %s (%s), signed, with its SBOM attestation\n", p.layout(), *version, img.Digest)
	fmt.Printf("%s: the SBOM (SPDX)\n", p.sbom())
	if *push {
		if err := image.Push(ctx, *repo, img.Entries); err != nil {
			return err
		}
		fmt.Printf("Pushed %s:%s@%s with its signatures and SBOM attestation\n", *repo, *version, img.Digest)
	}
	return nil
}

func runDirectory(args []string) error {
	fs := flag.NewFlagSet("directory", flag.ContinueOnError)
	version := fs.String("version", release.Version(), "Release version.")
	out := fs.String("out", "out", "Directory of `make image`'s output; the release is written to <out>/release.")
	repo := fs.String("repo", "", "Image repository the manifests name ("+release.Image+" when empty).")
	pub := fs.String("pub", "", "Public key that must verify the image's signatures; <out>/cosign.pub by default.")
	github := fs.String("github", release.GitHubRepository, "GitHub repository (owner/name) the release is published in.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := paths{out: *out}
	if *pub == "" {
		*pub = p.pub()
	}
	digest, sbom, err := verifyLayout(p.layout(), *version, *pub)
	if err != nil {
		return err
	}
	if _, err := dist.WriteDirectory(dist.DirectoryOptions{
		Dir: p.release(), Version: *version, Repository: *repo, Digest: digest, SBOM: sbom, GitHubRepository: *github,
	}); err != nil {
		return err
	}
	fmt.Printf("%s: the GitHub release %s of every provider, image %s\n", p.release(), *version, release.ImageReference(*repo, *version, digest.String()))
	return nil
}

func runVerify(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	version := fs.String("version", release.Version(), "Tag of the image.")
	pub := fs.String("pub", "out/cosign.pub", "Public key (cosign.pub).")
	layout := fs.String("layout", "", "OCI image layout to verify.")
	repo := fs.String("repo", "", "Registry repository to verify (instead of -layout).")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*layout == "") == (*repo == "") {
		return errors.New("give one of -layout and -repo")
	}
	if *layout != "" {
		digest, _, err := verifyLayout(*layout, *version, *pub)
		if err != nil {
			return err
		}
		fmt.Printf("Verified %s in %s: the image and each platform's are signed with %s, and so is its SBOM\n", digest, *layout, *pub)
		return nil
	}
	r, err := name.NewRepository(*repo)
	if err != nil {
		return err
	}
	v, err := loadVerifier(*pub)
	if err != nil {
		return err
	}
	digest, _, err := dist.Verify(image.Remote{Repository: r, Options: []remote.Option{remote.WithContext(ctx)}}, *version, v)
	if err != nil {
		return err
	}
	fmt.Printf("Verified %s:%s (%s): the image and each platform's are signed with %s, and so is its SBOM\n", *repo, *version, digest, *pub)
	return nil
}

func verifyLayout(layout, version, pub string) (digest v1.Hash, sbom []byte, err error) {
	entries, err := image.ReadLayout(layout)
	if err != nil {
		return v1.Hash{}, nil, err
	}
	v, err := loadVerifier(pub)
	if err != nil {
		return v1.Hash{}, nil, err
	}
	return dist.Verify(image.Entries(entries), version, v)
}

func loadVerifier(pub string) (*signature.Verifier, error) {
	data, err := os.ReadFile(pub)
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	return signature.LoadVerifier(data)
}

func parseEpoch(s string) (time.Time, error) {
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("creation time %q is not seconds since the epoch", s)
	}
	return time.Unix(n, 0).UTC(), nil
}
