// Command image builds a container image from static binaries without a container engine and
// writes it as an image tarball (docker-archive layout with manifest.json, the format that
// `kind load image-archive`, `ctr images import` and `docker load` read). `make image` runs it.
//
// --format=oci writes an OCI image layout as a tar instead, holding one image per --arch (a
// comma-separated list) under one index named --tag; each --file SRC may then contain {arch}, replaced
// per architecture. make dist writes the per-release multi-architecture images this way.
//
// By default it is the pv-controller-manager image: FROM scratch, the static binary at
// /usr/local/bin/pv-controller-manager, an /etc/passwd naming the non-root uid 65532, /tmp; user
// 65532:65532 (the Dockerfile builds the same). --file, --entrypoint and --user make other images
// the same way (make e2e-node builds its pause and kube-controller-manager images with it).
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func main() {
	binary := flag.String("binary", "bin/pv-controller-manager", "static linux binary to put at /usr/local/bin/pv-controller-manager")
	tag := flag.String("tag", "pv-controller-manager.local/pv-controller-manager:dev", "image reference written into the tarball")
	out := flag.String("out", "_output/image/pv-controller-manager.tar", "image tarball to write")
	arch := flag.String("arch", "amd64", "GOARCH of the binary; with --format=oci, a comma-separated list")
	format := flag.String("format", "docker", "docker: a docker-archive tarball of one image; oci: an OCI image layout tar, one image per --arch")
	version := flag.String("version", "dev", "org.opencontainers.image.version label")
	revision := flag.String("revision", "", "org.opencontainers.image.revision label")
	var files fileFlags
	flag.Var(&files, "file", "SRC=DEST: put the file SRC at DEST in the image, mode 0755 (repeatable; replaces --binary)")
	var links symlinkFlags
	flag.Var(&links, "symlink", "DEST=TARGET: a symbolic link at DEST pointing to TARGET (repeatable), e.g. busybox applets")
	entrypoint := flag.String("entrypoint", "/usr/local/bin/pv-controller-manager", "comma-separated entrypoint; empty for none")
	cmd := flag.String("cmd", "", "comma-separated default arguments (the image's Cmd); empty for none")
	pathEnv := flag.String("path", "/usr/local/bin:/usr/bin:/bin", "the image's PATH")
	user := flag.String("user", "65532:65532", "image user")
	title := flag.String("title", "pv-controller-manager", "org.opencontainers.image.title label")
	flag.Parse()

	if len(files) == 0 {
		files = fileFlags{{src: *binary, dest: "usr/local/bin/pv-controller-manager"}}
	}
	files = append(files, links...)
	ref, err := name.ParseReference(*tag)
	if err != nil {
		log.Fatalf("--tag: %v", err)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":    *title,
		"org.opencontainers.image.source":   "https://github.com/fastpv/pv-controller-manager",
		"org.opencontainers.image.version":  *version,
		"org.opencontainers.image.revision": *revision,
	}
	spec := imageSpec{user: *user, entrypoint: *entrypoint, cmd: *cmd, path: *pathEnv, labels: labels, oci: *format == "oci"}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		log.Fatal(err)
	}
	switch *format {
	case "docker":
		img := spec.build(files, *arch)
		if err := tarball.WriteToFile(*out, ref, img); err != nil {
			log.Fatal(err)
		}
		digest, _ := img.Digest()
		fmt.Printf("image: %s %s -> %s\n", ref.Name(), digest, *out)
	case "oci":
		var idx v1.ImageIndex = empty.Index
		for _, a := range strings.Split(*arch, ",") {
			img := spec.build(files, a)
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
				Platform: &v1.Platform{OS: "linux", Architecture: a}}})
		}
		if err := writeOCILayout(*out, *tag, idx); err != nil {
			log.Fatal(err)
		}
		digest, _ := idx.Digest()
		fmt.Printf("image index: %s %s (%s) -> %s\n", ref.Name(), digest, *arch, *out)
	default:
		log.Fatalf("--format: want docker or oci, got %q", *format)
	}
}

// imageSpec is what every architecture's image shares.
type imageSpec struct {
	user, entrypoint, cmd, path string
	labels                      map[string]string
	oci                         bool // OCI media types instead of Docker's
}

// build returns the image of one architecture; {arch} in a file's SRC is replaced by arch.
func (s imageSpec) build(shared []file, arch string) v1.Image {
	// A copy: the layer is read lazily, when written, after the other architectures' builds.
	files := slices.Clone(shared)
	for i := range files {
		if files[i].link != "" {
			continue
		}
		data, err := os.ReadFile(strings.ReplaceAll(files[i].src, "{arch}", arch))
		if err != nil {
			log.Fatalf("--file/--binary: %v", err)
		}
		files[i].data = data
	}
	// Fixed timestamps: the same binary gives the same image digest.
	epoch := time.Unix(0, 0).UTC()
	var layerOpts []tarball.LayerOption
	base := empty.Image
	if s.oci {
		layerOpts = append(layerOpts, tarball.WithMediaType(types.OCILayer))
		base = mutate.MediaType(mutate.ConfigMediaType(base, types.OCIConfigJSON), types.OCIManifestSchema1)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(rootfs(files, epoch))), nil
	}, layerOpts...)
	if err != nil {
		log.Fatal(err)
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		log.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.User = s.user
	if s.entrypoint != "" {
		cfg.Config.Entrypoint = strings.Split(s.entrypoint, ",")
	}
	if s.cmd != "" {
		cfg.Config.Cmd = strings.Split(s.cmd, ",")
	}
	cfg.Config.Env = []string{"PATH=" + s.path}
	cfg.Config.WorkingDir = "/"
	cfg.Config.Labels = s.labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		log.Fatal(err)
	}
	return img
}

// writeOCILayout writes idx as an OCI image layout named ref as given (docker.io/..., not
// index.docker.io/...) in the index's
// org.opencontainers.image.ref.name, as `ctr images import` and `docker load` read it) into a tar
// with sorted entries and fixed times, so the same binaries give the same bytes.
func writeOCILayout(out, ref string, idx v1.ImageIndex) error {
	dir, err := os.MkdirTemp("", "oci-layout")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref,
		"io.containerd.image.name":          ref,
	})); err != nil {
		return err
	}
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			paths = append(paths, p)
		}
		return err
	}); err != nil {
		return err
	}
	sort.Strings(paths)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if info.IsDir() {
			h.Name, h.Typeflag, h.Mode = h.Name+"/", tar.TypeDir, 0o755
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// file is one --file flag: SRC on this machine, DEST in the image.
type file struct {
	src, dest string
	link      string // set: a symlink to link, no src
	data      []byte
}

type fileFlags []file

func (f *fileFlags) String() string { return fmt.Sprint(*f) }
func (f *fileFlags) Set(v string) error {
	src, dest, ok := strings.Cut(v, "=")
	if !ok || src == "" || dest == "" {
		return fmt.Errorf("want SRC=DEST, got %q", v)
	}
	*f = append(*f, file{src: src, dest: strings.TrimPrefix(dest, "/")})
	return nil
}

type symlinkFlags []file

func (f *symlinkFlags) String() string { return fmt.Sprint(*f) }
func (f *symlinkFlags) Set(v string) error {
	dest, target, ok := strings.Cut(v, "=")
	if !ok || dest == "" || target == "" {
		return fmt.Errorf("want DEST=TARGET, got %q", v)
	}
	*f = append(*f, file{dest: strings.TrimPrefix(dest, "/"), link: target})
	return nil
}

// rootfs is the single layer: directories, /etc/passwd and /etc/group for uid 65532, the files.
func rootfs(files []file, mtime time.Time) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body []byte) {
		h.ModTime, h.Format = mtime, tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			log.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			log.Fatal(err)
		}
	}
	dirs := map[string]bool{}
	mkdirs := func(p string) {
		var parts []string
		for _, part := range strings.Split(path.Dir(p), "/") {
			if part == "." || part == "" {
				continue
			}
			parts = append(parts, part)
			d := strings.Join(parts, "/") + "/"
			if !dirs[d] {
				dirs[d] = true
				add(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}, nil)
			}
		}
	}
	mkdirs("etc/passwd")
	add(&tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}, nil)
	passwd := []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")
	group := []byte("root:x:0:\nnonroot:x:65532:\n")
	add(&tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(passwd))}, passwd)
	add(&tar.Header{Name: "etc/group", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(group))}, group)
	for _, f := range files {
		mkdirs(f.dest)
		if f.link != "" {
			add(&tar.Header{Name: f.dest, Typeflag: tar.TypeSymlink, Linkname: f.link, Mode: 0o777}, nil)
			continue
		}
		add(&tar.Header{Name: f.dest, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(f.data))}, f.data)
	}
	if err := tw.Close(); err != nil {
		log.Fatal(err)
	}
	return buf.Bytes()
}
