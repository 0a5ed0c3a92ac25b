package kcmargs

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
)

const (
	// BinderController is KCM's name for the PersistentVolume binder.
	BinderController = names.PersistentVolumeBinderController
	// BinderControllerAlias is the older name KCM still accepts for it.
	BinderControllerAlias = "persistentvolume-binder"
	// ControllersFlag is KCM's flag that lists the controllers to run.
	ControllersFlag = "controllers"
	// Binary is KCM's binary name, as in kubeadm's manifest.
	Binary = "kube-controller-manager"
)

// Controllers returns the --controllers entries of a KCM command line (args without the binary),
// as pflag would read them: repeated flags append, "--controllers=a,b" and "--controllers a,b" both
// count. present is false when the flag is absent (KCM then runs "*").
func Controllers(args []string) (controllers []string, present bool) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") || name != ControllersFlag {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		present = true
		controllers = append(controllers, SplitList(value)...)
	}
	if !present {
		return []string{"*"}, false
	}
	return controllers, true
}

// SplitList splits a --controllers value; empty entries are dropped as pflag's StringSlice keeps
// them but KCM never matches them.
func SplitList(value string) []string {
	var out []string
	for _, entry := range strings.Split(value, ",") {
		if entry = strings.TrimSpace(entry); entry != "" {
			out = append(out, entry)
		}
	}
	return out
}

// Canonical maps the binder's alias (also in "-alias" form) to its canonical name, as KCM does
// before deciding.
func Canonical(entry string) string {
	switch entry {
	case BinderControllerAlias:
		return BinderController
	case "-" + BinderControllerAlias:
		return "-" + BinderController
	}
	return entry
}

// BinderEnabledIn tells whether KCM runs its binder with these --controllers entries, by KCM's
// IsControllerEnabled (the first explicit entry wins; "*" enables it; nothing enables nothing).
func BinderEnabledIn(controllers []string) bool {
	canonical := make([]string, 0, len(controllers))
	for _, c := range controllers {
		canonical = append(canonical, Canonical(c))
	}
	return genericcontrollermanager.IsControllerEnabled(BinderController, sets.NewString(), canonical)
}

// BinderEnabled tells whether a KCM started with args (binary excluded) runs its binder.
func BinderEnabled(args []string) bool {
	controllers, _ := Controllers(args)
	return BinderEnabledIn(controllers)
}

// isKCMCommand tells whether command[0] is kube-controller-manager.
func isKCMCommand(command []string) bool {
	return len(command) > 0 && path.Base(command[0]) == Binary
}

// ContainerArgs returns the KCM command line (binary excluded) of a container that runs
// kube-controller-manager: by its command, or by its name when the command comes from the image.
func ContainerArgs(command, args []string, name string) ([]string, bool) {
	if isKCMCommand(command) {
		return append(append([]string{}, command[1:]...), args...), true
	}
	if name == Binary && len(command) == 0 {
		return append([]string{}, args...), true
	}
	return nil, false
}
