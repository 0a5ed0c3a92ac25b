package rollout

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// ShadowFlag is the binder's shadow-mode flag (docs/operators/shadow.md).
const ShadowFlag = "--shadow"

// Shadow installs our static pod in shadow mode beside KCM's binder, which it does not touch:
// every write ours makes is a dry run, and its decisions are compared with KCM's. Refused when
// KCM's manifest on this node already runs without its binder (there would be nothing to
// compare with here: `disable` first). `enable` later replaces the shadow with the binding
// manifest; `disable` removes it. Idempotent.
func Shadow(o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	kcmPath, current, edited, err := o.readKCM()
	if err != nil {
		return err
	}
	if bytes.Equal(edited, current) {
		return fmt.Errorf("%s runs without its binder: pv-controller-manager binds on this node, a shadow would compare with nothing (run disable first)", kcmPath)
	}
	ours, _, err := o.ourManifest()
	if err != nil {
		return err
	}
	if ours, err = AddFlag(ours, ShadowFlag); err != nil {
		return err
	}
	if ours, _, err = Stamp(ours); err != nil {
		return err
	}
	ourPath := filepath.Join(o.ManifestsDir, OurManifestName)
	if existing, err := os.ReadFile(ourPath); err == nil && bytes.Equal(existing, ours) {
		o.logf("%s is up to date (shadow)", ourPath)
		return nil
	}
	o.logf("installing %s in shadow mode; %s unchanged (KCM keeps binding)", ourPath, kcmPath)
	return o.writeFile(ourPath, ours, 0o600)
}

var binaryLine = regexp.MustCompile(`(?m)^(\s*- )/usr/local/bin/pv-controller-manager\s*$`)

// AddFlag adds flag to our manifest's command, right after the binary, unless it is there.
func AddFlag(manifest []byte, flag string) ([]byte, error) {
	if regexp.MustCompile(`(?m)^\s*- ` + regexp.QuoteMeta(flag) + `\s*$`).Match(manifest) {
		return manifest, nil
	}
	matches := binaryLine.FindAllSubmatchIndex(manifest, -1)
	if len(matches) != 1 {
		return nil, fmt.Errorf("our manifest must have exactly one command line `- /usr/local/bin/pv-controller-manager`, found %d", len(matches))
	}
	m := matches[0]
	indent := manifest[m[2]:m[3]]
	var buf bytes.Buffer
	buf.Write(manifest[:m[1]])
	buf.WriteString("\n")
	buf.Write(indent)
	buf.WriteString(flag)
	buf.Write(manifest[m[1]:])
	return buf.Bytes(), nil
}
