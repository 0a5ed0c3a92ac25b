package rollout

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/fastpv/pv-controller-manager/pkg/kcmargs"
)

// disableEntry is what we add to KCM's --controllers.
const disableEntry = "-" + kcmargs.BinderController

// kcmContainer finds the kube-controller-manager container of a static pod manifest and returns
// its command line without the binary.
func kcmContainer(manifest []byte) (*corev1.Container, []string, error) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(manifest, &pod); err != nil {
		if err2 := yaml.Unmarshal(manifest, &pod); err2 != nil {
			return nil, nil, fmt.Errorf("not a Pod manifest: %w", err2)
		}
	}
	if pod.Kind != "Pod" {
		return nil, nil, fmt.Errorf("not a Pod manifest (kind %q)", pod.Kind)
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if args, ok := kcmargs.ContainerArgs(c.Command, c.Args, c.Name); ok {
			return c, args, nil
		}
	}
	return nil, nil, errors.New("no kube-controller-manager container (by command or name) in the manifest")
}

// BinderEnabled tells whether the KCM of this manifest runs its PersistentVolume binder.
func BinderEnabled(manifest []byte) (bool, error) {
	_, args, err := kcmContainer(manifest)
	if err != nil {
		return false, err
	}
	return kcmargs.BinderEnabled(args), nil
}

// DisableBinder returns the manifest with KCM's binder switched off: "-persistentvolume-binder-controller"
// added to --controllers (the flag created as "*,-persistentvolume-binder-controller" when absent),
// positive entries for the binder removed, every other entry and every other byte kept. A manifest
// whose KCM already runs without the binder is returned unchanged.
func DisableBinder(manifest []byte) ([]byte, error) {
	return editControllers(manifest, false)
}

// EnableBinder is DisableBinder's inverse for when no backup of the original exists: it removes
// our disabling entries (and the alias form) from --controllers, adding the binder to an explicit
// list that would still not run it. Byte-exact restores come from the backup (see Disable).
func EnableBinder(manifest []byte) ([]byte, error) {
	return editControllers(manifest, true)
}

func editControllers(manifest []byte, enable bool) ([]byte, error) {
	_, args, err := kcmContainer(manifest)
	if err != nil {
		return nil, err
	}
	if kcmargs.BinderEnabled(args) == enable {
		return manifest, nil
	}
	controllers, present := kcmargs.Controllers(args)
	next := newControllers(controllers, enable)
	if len(next) == 0 {
		return nil, fmt.Errorf("--controllers=%s would leave kube-controller-manager with no controller", strings.Join(controllers, ","))
	}
	value := strings.Join(next, ",")

	var out []byte
	if present {
		out, err = replaceFlagLine(manifest, value)
	} else {
		out, err = insertFlagLine(manifest, args, value)
	}
	if err != nil {
		return nil, err
	}
	// The edit must have done exactly what we meant: re-read it.
	_, newArgs, err := kcmContainer(out)
	if err != nil {
		return nil, fmt.Errorf("edited manifest no longer parses: %w", err)
	}
	if kcmargs.BinderEnabled(newArgs) != enable {
		return nil, errors.New("edited manifest does not have the binder switched as intended; edit it by hand")
	}
	if got, _ := kcmargs.Controllers(newArgs); !slices.Equal(got, next) {
		return nil, fmt.Errorf("edited manifest has --controllers=%s, want %s; edit it by hand", strings.Join(got, ","), value)
	}
	return out, nil
}

// newControllers computes the --controllers entries that switch the binder on or off and keeps
// everything else in order.
func newControllers(controllers []string, enable bool) []string {
	var out []string
	for _, c := range controllers {
		switch kcmargs.Canonical(c) {
		case kcmargs.BinderController, disableEntry:
			continue // re-added below as needed
		}
		out = append(out, c)
	}
	if kcmargs.BinderEnabledIn(out) != enable {
		if enable {
			out = append(out, kcmargs.BinderController)
		} else {
			out = append(out, disableEntry)
		}
	}
	return out
}

// flagLine matches a block-sequence item holding --controllers=VALUE, optionally quoted.
var flagLine = regexp.MustCompile(`(?m)^(\s*-\s+)(["']?)(--?controllers=)([^"'\s#]*)(["']?)([ \t]*(?:#.*)?)$`)

// anyControllersMention catches forms we do not edit (separate value, flow sequences).
var anyControllersMention = regexp.MustCompile(`(?:^|[\s"'\[,])--?controllers\b`)

func replaceFlagLine(manifest []byte, value string) ([]byte, error) {
	matches := flagLine.FindAllSubmatchIndex(manifest, -1)
	mentions := anyControllersMention.FindAllIndex(manifest, -1)
	if len(matches) != 1 || len(mentions) != 1 {
		return nil, fmt.Errorf("found %d --controllers items (%d mentions); only one \"- --controllers=...\" block-sequence item can be edited, edit the manifest by hand", len(matches), len(mentions))
	}
	m := matches[0]
	var buf bytes.Buffer
	buf.Write(manifest[:m[8]])
	buf.WriteString(value)
	buf.Write(manifest[m[9]:])
	return buf.Bytes(), nil
}

// itemLine matches a block-sequence item holding a flag: indentation+dash, quote, flag name.
var itemLine = regexp.MustCompile(`^(\s*-\s+)(["']?)--?([a-z0-9-]+)`)

// insertFlagLine adds "--controllers=VALUE" as a new item among KCM's flags, in alphabetical
// position (kubeadm sorts them), with the indentation and quoting of its neighbours.
func insertFlagLine(manifest []byte, args []string, value string) ([]byte, error) {
	if anyControllersMention.Match(manifest) {
		return nil, errors.New("the manifest mentions --controllers in a form we do not edit; edit it by hand")
	}
	flags := map[string]bool{}
	for _, a := range args {
		flags[a] = true
	}
	lines := strings.SplitAfter(string(manifest), "\n")
	insertAt, lastFlag := -1, -1
	var prefix, quote string
	for i, line := range lines {
		m := itemLine.FindStringSubmatch(strings.TrimRight(line, "\r\n"))
		if m == nil {
			continue
		}
		item := strings.TrimSpace(strings.TrimPrefix(strings.TrimRight(line, "\r\n"), m[1]))
		if unquoted := strings.Trim(item, `"'`); !flags[unquoted] {
			continue
		}
		if lastFlag >= 0 && m[1] != prefix {
			continue // another list
		}
		lastFlag, prefix, quote = i, m[1], m[2]
		if insertAt < 0 && m[3] > kcmargs.ControllersFlag {
			insertAt = i
		}
	}
	if lastFlag < 0 {
		return nil, errors.New("no flag items of kube-controller-manager found to insert --controllers next to; edit the manifest by hand")
	}
	if insertAt < 0 {
		insertAt = lastFlag + 1
	}
	eol := "\n"
	if strings.HasSuffix(lines[lastFlag], "\r\n") {
		eol = "\r\n"
	}
	newLine := prefix + quote + "--" + kcmargs.ControllersFlag + "=" + value + quote + eol
	out := slices.Insert(lines, insertAt, newLine)
	return []byte(strings.Join(out, "")), nil
}
