package rollout

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
}

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

// Enable switches the node to pv-controller-manager: KCM's manifest loses its binder (the
// original saved in BackupDir first), then our manifest is installed. KCM is edited first so that
// two binders never run at once; claims wait for the seconds in between. Idempotent.
func Enable(o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	kcmPath, current, edited, err := o.readKCM()
	if err != nil {
		return err
	}
	backupPath := filepath.Join(o.BackupDir, KCMManifestName)
	if !bytes.Equal(edited, current) {
		// The current manifest runs the binder, so it is the original to restore later (after a
		// kubeadm upgrade rewrote it, too): back it up, replacing an older backup.
		o.logf("backing up %s to %s", kcmPath, backupPath)
		if err := o.writeFile(backupPath, current, 0o600); err != nil {
			return err
		}
		o.logf("disabling KCM's binder in %s", kcmPath)
		if err := o.writeFile(kcmPath, edited, 0o600); err != nil {
			return err
		}
	} else {
		o.logf("%s already runs without the binder; unchanged", kcmPath)
	}

	ours := o.OurManifest
	if o.Image != "" {
		ours, err = SetImage(ours, o.Image)
		if err != nil {
			return err
		}
	}
	ourPath := filepath.Join(o.ManifestsDir, OurManifestName)
	if existing, err := os.ReadFile(ourPath); err == nil && bytes.Equal(existing, ours) {
		o.logf("%s is up to date", ourPath)
		return nil
	}
	o.logf("installing %s", ourPath)
	return o.writeFile(ourPath, ours, 0o600)
}

// Disable rolls back: our manifest is removed, then KCM's original is restored byte for byte from
// the backup. If KCM's manifest was changed after Enable (it is not what Enable made of the backup),
// the change is kept and only the binder is switched back on; the backup is then left in place.
func Disable(o Options) error {
	if err := o.validate(); err != nil {
		return err
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
