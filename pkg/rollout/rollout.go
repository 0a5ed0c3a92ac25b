package rollout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/distribution/reference"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	// KCMManifestName is kubeadm's file name for KCM's static pod.
	KCMManifestName = "kube-controller-manager.yaml"
	// OurManifestName is the file name of our static pod.
	OurManifestName = "pv-controller-manager.yaml"
)

// Options says where the files are. The backup directory must not be the kubelet's static pod
// directory: the kubelet would run every manifest it finds there.
type Options struct {
	ManifestsDir string // e.g. /etc/kubernetes/manifests
	BackupDir    string // e.g. /etc/kubernetes/pv-controller-manager-backup
	OurManifest  []byte // our static pod manifest to install
	Image        string // replaces the image of our manifest when set
	DryRun       bool
	Log          func(format string, args ...any)

	// Check, when set, is how Enable waits for our pod to come up on this node before it turns
	// KCM's binder off: polled every WaitInterval for at most WaitTimeout, until it has passed for
	// Settle in a row.
	Check        PodCheck
	WaitTimeout  time.Duration
	WaitInterval time.Duration
	Settle       time.Duration
	// KCMCheck, when set, is how Disable waits for KCM to run its binder again before it removes
	// our pod, and how Enable waits for KCM to run without it (same timeout and interval).
	KCMCheck PodCheck
	// BinderCheck, when set, is how Enable makes sure that a binder runs once KCM's is off on
	// this node (KCM's leader elsewhere runs its binder, or a replica of ours leads and is Ready):
	// if none does within WaitTimeout (and for Settle), KCM's binder is switched back on here.
	BinderCheck PodCheck
	// KubeconfigPath is the file our pod's --kubeconfig names on this node; Enable refuses to
	// install a pod whose identity is missing.
	KubeconfigPath string
}

// StampAnnotation marks our manifest with a digest of its content, which the mirror pod
// carries: the wait after a change is for the pod of that manifest, not the one it replaces.
const StampAnnotation = "pv-controller-manager/manifest-digest"

// ImagePlaceholder is the image our manifest names as shipped: no registry of ours publishes an
// image, so the operator names theirs (deploy/rollout.sh enable --image, docs/install.md).
const ImagePlaceholder = "REGISTRY/pv-controller-manager:VERSION"

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

func (o *Options) validate() error {
	if o.ManifestsDir == "" || o.BackupDir == "" {
		return errors.New("the manifests and backup directories must be set")
	}
	m, err := filepath.Abs(o.ManifestsDir)
	if err != nil {
		return err
	}
	b, err := filepath.Abs(o.BackupDir)
	if err != nil {
		return err
	}
	if m == b {
		return fmt.Errorf("backup directory %s is the static pod directory: the kubelet would run the backup", b)
	}
	return nil
}

// Enable switches the node to pv-controller-manager, keeping a binder at every moment: our
// manifest is installed first, and only once our pod runs its image and is ready to bind (Check:
// its /readyz but for the upstream-binder check, for Settle) is KCM's binder turned off (its
// manifest saved in BackupDir first). Until then KCM binds and ours holds its writes (the
// upstream-binder guard). If our pod does not come up, our manifest is put back as it was
// (removed, or the previous one of an upgrade), KCM is not touched, and the error says why. Once
// KCM runs without its binder here, Enable waits for a binder to run (BinderCheck); if none does,
// KCM's binder is switched back on here and the error says why. Idempotent.
func Enable(o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	kcmPath, current, edited, err := o.readKCM()
	if err != nil {
		return err
	}
	ours, image, err := o.ourManifest()
	if err != nil {
		return err
	}
	ours, stamp, err := Stamp(ours)
	if err != nil {
		return err
	}
	if o.KubeconfigPath != "" {
		if _, err := os.Stat(o.KubeconfigPath); err != nil {
			return fmt.Errorf("our pod's kubeconfig: %w (mint it first: docs/operators/rollout.md, step 3)", err)
		}
	}

	ourPath := filepath.Join(o.ManifestsDir, OurManifestName)
	previous, err := os.ReadFile(ourPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	hadPrevious := err == nil
	if hadPrevious && bytes.Equal(previous, ours) {
		o.logf("%s is up to date", ourPath)
	} else {
		o.logf("installing %s (%s)", ourPath, image)
		if err := o.writeFile(ourPath, ours, 0o600); err != nil {
			return err
		}
	}
	if err := o.wait("our pod to run "+image+" and be ready to bind", o.Check, Want{Image: image, Stamp: stamp}); err != nil {
		if hadPrevious && !bytes.Equal(previous, ours) {
			o.logf("putting the previous %s back", ourPath)
			if werr := o.writeFile(ourPath, previous, 0o600); werr != nil {
				return fmt.Errorf("our pod did not come up (%v), and restoring %s failed: %w", err, ourPath, werr)
			}
		} else if !hadPrevious && !o.DryRun {
			o.logf("removing %s", ourPath)
			if rerr := os.Remove(ourPath); rerr != nil {
				return fmt.Errorf("our pod did not come up (%v), and removing %s failed: %w", err, ourPath, rerr)
			}
		}
		if bytes.Equal(edited, current) {
			return fmt.Errorf("our pod did not come up, the previous manifest is back (KCM runs without its binder here, as before): %w", err)
		}
		return fmt.Errorf("our pod did not come up, KCM's binder left on in %s: %w", kcmPath, err)
	}

	if bytes.Equal(edited, current) {
		o.logf("%s already runs without the binder; unchanged", kcmPath)
		return nil
	}
	// The current manifest runs the binder, so it is the original to restore later (after a
	// kubeadm upgrade rewrote it, too): back it up, replacing an older backup.
	backupPath := filepath.Join(o.BackupDir, KCMManifestName)
	o.logf("backing up %s to %s", kcmPath, backupPath)
	if err := o.writeFile(backupPath, current, 0o600); err != nil {
		return err
	}
	o.logf("disabling KCM's binder in %s", kcmPath)
	if err := o.writeFile(kcmPath, edited, 0o600); err != nil {
		return err
	}
	err = o.wait("KCM to run without its binder", o.KCMCheck, Want{CommandHas: "-persistentvolume-binder-controller"})
	if err == nil {
		err = o.wait("a binder to run (KCM's leader elsewhere, or ours leading and Ready)", o.BinderCheck, Want{})
	}
	if err != nil {
		o.logf("switching KCM's binder back on in %s", kcmPath)
		if werr := o.writeFile(kcmPath, current, 0o600); werr != nil {
			return fmt.Errorf("no binder ran once KCM's was off (%v), and switching it back on in %s failed: %w", err, kcmPath, werr)
		}
		return fmt.Errorf("no binder ran once KCM's was off here, so KCM's binder is back on in %s (our pod stays installed and holds its writes while KCM binds; disable removes it): %w", kcmPath, err)
	}
	return nil
}

// ourManifest is the manifest to install and its image: o.Image when set, else the manifest's,
// which must not be the shipped placeholder.
func (o *Options) ourManifest() ([]byte, string, error) {
	ours := o.OurManifest
	if o.Image != "" {
		if err := ValidateImage(o.Image); err != nil {
			return nil, "", err
		}
		var err error
		if ours, err = SetImage(ours, o.Image); err != nil {
			return nil, "", err
		}
	}
	image, err := ManifestImage(ours)
	if err != nil {
		return nil, "", err
	}
	if image == ImagePlaceholder {
		return nil, "", fmt.Errorf("no image: pass --image with the image you pushed, e.g. --image registry.example/pv-controller-manager:v0.1.0-k8s1.37.2 (docs/install.md)")
	}
	return ours, image, ValidateImage(image)
}

// wait polls check for want until it passes or fails; a nil check, or no timeout, does not wait.
func (o *Options) wait(what string, check PodCheck, want Want) error {
	if check == nil || o.WaitTimeout <= 0 {
		return nil
	}
	if o.DryRun {
		o.logf("(dry run) would wait up to %s for %s", o.WaitTimeout, what)
		return nil
	}
	interval := o.WaitInterval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	o.logf("waiting up to %s for %s", o.WaitTimeout, what)
	if err := waitFor(context.Background(), check, want, o.WaitTimeout, interval, o.Settle, time.Now); err != nil {
		return err
	}
	o.logf("done waiting for %s", what)
	return nil
}

var (
	metadataLine    = regexp.MustCompile(`(?m)^metadata:[ \t]*\n`)
	annotationsLine = regexp.MustCompile(`(?m)^  annotations:[ \t]*\n`)
	otherAnnotation = regexp.MustCompile(`(?m)^  annotations:.*\S.*$`) // a flow form, annotations: {...}
	stampLine       = regexp.MustCompile(`(?m)^    ` + regexp.QuoteMeta(StampAnnotation) + `: "[0-9a-f]*"\n`)
)

// Stamp returns manifest with StampAnnotation set to a digest of the rest, and that digest: the
// line is added to the manifest's annotations (a block of them is made when it has none) and
// removed again before the digest is taken, so that stamping a stamped manifest changes nothing.
func Stamp(manifest []byte) ([]byte, string, error) {
	unstamped := unstamp(manifest)
	if otherAnnotation.Match(unstamped) {
		return nil, "", fmt.Errorf("our manifest's metadata.annotations must be a block (one annotation a line), not a flow mapping")
	}
	sum := sha256.Sum256(unstamped)
	digest := hex.EncodeToString(sum[:8])
	line := fmt.Sprintf("    %s: %q\n", StampAnnotation, digest)
	at, block := annotationsLine.FindIndex(unstamped), ""
	if at == nil {
		if at = metadataLine.FindIndex(unstamped); at == nil {
			return nil, "", fmt.Errorf("our manifest has no top-level metadata")
		}
		block = "  annotations:\n"
	}
	var buf bytes.Buffer
	buf.Write(unstamped[:at[1]])
	buf.WriteString(block + line)
	buf.Write(unstamped[at[1]:])
	return buf.Bytes(), digest, nil
}

// unstamp removes Stamp's line, and the annotations block Stamp made if nothing else is in it.
func unstamp(manifest []byte) []byte {
	loc := stampLine.FindIndex(manifest)
	if loc == nil {
		return manifest
	}
	start, end := loc[0], loc[1]
	if block := []byte("  annotations:\n"); bytes.HasSuffix(manifest[:start], block) && !bytes.HasPrefix(manifest[end:], []byte("    ")) {
		start -= len(block)
	}
	return append(append([]byte{}, manifest[:start]...), manifest[end:]...)
}

// Disable rolls back, keeping a binder at every moment: KCM's binder is switched on first (its
// original manifest restored byte for byte from the backup), so that ours, which holds its
// writes as soon as a KCM that leads runs its binder, binds until KCM does; then our manifest is
// removed. If KCM's manifest was changed after Enable (it is not what Enable made of the backup),
// or there is no backup (a cluster made with the kubeadm recipe, whose KCM was rendered without
// the binder), the change is kept and only the binder is switched back on in the current file;
// a backup is then left in place.
func Disable(o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := o.restoreKCM(); err != nil {
		return err
	}
	if err := o.wait("KCM to run its binder again", o.KCMCheck, Want{CommandLacks: "-persistentvolume-binder-controller"}); err != nil {
		return fmt.Errorf("KCM did not come back with its binder, our pod is left in place so that a binder runs here (rerun with --wait-timeout=0 to remove it anyway): %w", err)
	}
	ourPath := filepath.Join(o.ManifestsDir, OurManifestName)
	if _, err := os.Stat(ourPath); err == nil {
		o.logf("removing %s", ourPath)
		if !o.DryRun {
			if err := os.Remove(ourPath); err != nil {
				return err
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// restoreKCM switches KCM's binder back on: the backup when it is what Enable edited, else the
// current manifest with the binder enabled.
func (o *Options) restoreKCM() error {
	kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
	backupPath := filepath.Join(o.BackupDir, KCMManifestName)
	current, err := os.ReadFile(kcmPath)
	if err != nil {
		return fmt.Errorf("reading KCM's manifest: %w", err)
	}
	backup, err := os.ReadFile(backupPath)
	switch {
	case err == nil:
		writtenByEnable, err := DisableBinder(backup)
		if err != nil {
			return fmt.Errorf("%s: %w", backupPath, err)
		}
		if bytes.Equal(writtenByEnable, current) || bytes.Equal(backup, current) {
			o.logf("restoring %s from %s", kcmPath, backupPath)
			if err := o.writeFile(kcmPath, backup, 0o600); err != nil {
				return err
			}
			if o.DryRun {
				return nil
			}
			return os.Remove(backupPath)
		}
		o.logf("%s changed since it was backed up; switching the binder back on in the current file and keeping %s", kcmPath, backupPath)
	case errors.Is(err, fs.ErrNotExist):
		o.logf("no backup at %s; switching the binder back on in the current file", backupPath)
	default:
		return err
	}
	restored, err := EnableBinder(current)
	if err != nil {
		return fmt.Errorf("%s: %w", kcmPath, err)
	}
	if bytes.Equal(restored, current) {
		o.logf("%s already runs the binder; unchanged", kcmPath)
		return nil
	}
	return o.writeFile(kcmPath, restored, 0o600)
}

// readKCM reads KCM's manifest and what it is without the binder (equal when it runs without).
func (o *Options) readKCM() (path string, current, withoutBinder []byte, err error) {
	path = filepath.Join(o.ManifestsDir, KCMManifestName)
	if current, err = os.ReadFile(path); err != nil {
		return "", nil, nil, fmt.Errorf("reading KCM's manifest: %w", err)
	}
	if withoutBinder, err = DisableBinder(current); err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return path, current, withoutBinder, nil
}

// writeFile replaces path atomically through a dot-file in the same directory (the kubelet ignores
// dot-files), keeping the mode of an existing file.
func (o *Options) writeFile(path string, data []byte, mode fs.FileMode) error {
	if o.DryRun {
		o.logf("(dry run) would write %s (%d bytes)", path, len(data))
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

var imageLine = regexp.MustCompile(`(?m)^(\s*image:\s*)(\S+)(\s*)$`)

// ManifestImage returns the one image of our manifest.
func ManifestImage(manifest []byte) (string, error) {
	matches := imageLine.FindAllSubmatch(manifest, -1)
	if len(matches) != 1 {
		return "", fmt.Errorf("our manifest must have exactly one image line, found %d", len(matches))
	}
	return string(matches[0][2]), nil
}

// ManifestInfo returns our manifest's pod name and the host file it mounts as the pod's
// kubeconfig (the hostPath of its volume "kubeconfig"; "" when it mounts none).
func ManifestInfo(manifest []byte) (podName, kubeconfig string, err error) {
	var pod v1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return "", "", fmt.Errorf("our manifest: %w", err)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == "kubeconfig" && v.HostPath != nil {
			kubeconfig = v.HostPath.Path
		}
	}
	return pod.Name, kubeconfig, nil
}

// ValidateImage refuses what is not an image reference a kubelet can pull.
func ValidateImage(image string) error {
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return fmt.Errorf("image %q: %w", image, err)
	}
	return nil
}

// SetImage replaces the one image of our manifest.
func SetImage(manifest []byte, image string) ([]byte, error) {
	matches := imageLine.FindAllSubmatchIndex(manifest, -1)
	if len(matches) != 1 {
		return nil, fmt.Errorf("our manifest must have exactly one image line, found %d", len(matches))
	}
	m := matches[0]
	var buf bytes.Buffer
	buf.Write(manifest[:m[4]])
	buf.WriteString(image)
	buf.Write(manifest[m[5]:])
	return buf.Bytes(), nil
}
