// runc-dropcap runs runc with the container's capabilities cut to what this machine can grant.
//
// Some machines (this project's CI among them) run with a capability bounding set that lacks
// CAP_SYS_RESOURCE. A privileged container asks for every capability, and runc then fails with
// "unable to apply caps: operation not permitted". kind's nodes are privileged containers, and so
// are some pods inside them. Registered as the container engine's runtime (dockerd
// --add-runtime/--default-runtime, or as "runc" first in containerd's PATH inside a kind node), this
// wrapper removes from the OCI spec every capability missing from its own bounding set, then execs
// the real runc with the same arguments. On a machine with the full set it changes nothing.
//
// It edits the bundle's config.json for "create" and "run", and the --process file for "exec".
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// capNames indexes Linux capability numbers (linux/capability.h) by their OCI names.
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

func main() {
	real, err := realRunc()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runc-dropcap:", err)
		os.Exit(1)
	}
	missing, err := missingCaps("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, "runc-dropcap:", err)
		os.Exit(1)
	}
	if len(missing) > 0 {
		if err := rewrite(os.Args[1:], missing); err != nil {
			fmt.Fprintln(os.Stderr, "runc-dropcap:", err)
			os.Exit(1)
		}
	}
	if err := syscall.Exec(real, append([]string{"runc"}, os.Args[1:]...), os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "runc-dropcap: exec %s: %v\n", real, err)
		os.Exit(1)
	}
}

// realRunc is $RUNC_DROPCAP_RUNC, or the first "runc" on PATH that is not this program.
func realRunc() (string, error) {
	if p := os.Getenv("RUNC_DROPCAP_RUNC"); p != "" {
		return p, nil
	}
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for _, dir := range append(filepath.SplitList(os.Getenv("PATH")), "/usr/local/sbin", "/usr/sbin", "/usr/bin", "/sbin", "/bin") {
		p := filepath.Join(dir, "runc")
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil || resolved == self {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no runc found other than %s", self)
}

// missingCaps returns the names of the known capabilities absent from the bounding set.
func missingCaps(statusFile string) (map[string]bool, error) {
	f, err := os.Open(statusFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hex, ok := strings.CutPrefix(sc.Text(), "CapBnd:")
		if !ok {
			continue
		}
		bnd, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("parse CapBnd %q: %w", hex, err)
		}
		missing := map[string]bool{}
		for i, name := range capNames {
			if bnd&(1<<uint(i)) == 0 {
				missing[name] = true
			}
		}
		return missing, nil
	}
	return nil, fmt.Errorf("no CapBnd line in %s", statusFile)
}

// rewrite finds the spec file runc will read for this command line and drops the missing caps.
func rewrite(args []string, missing map[string]bool) error {
	command, bundle, process := "", "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() string {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "-") {
				return v
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--bundle" || a == "-b" || strings.HasPrefix(a, "--bundle="):
			bundle = value()
		case a == "--process" || a == "-p" || strings.HasPrefix(a, "--process="):
			process = value()
		// Global flags that take a value, so that value is not taken for the command.
		case a == "--root" || a == "--log" || a == "--log-format" || a == "--criu" || a == "--rootless":
			i++
		case command == "" && !strings.HasPrefix(a, "-"):
			command = a
		}
	}
	switch command {
	case "create", "run":
		if bundle == "" {
			bundle = "."
		}
		return dropCaps(filepath.Join(bundle, "config.json"), missing, "process")
	case "exec":
		if process != "" {
			return dropCaps(process, missing, "")
		}
	}
	return nil
}

// dropCaps removes the missing capabilities from every set of the process in file; processKey is
// the key of the process object ("process" in config.json) or "" when the file is the process.
func dropCaps(file string, missing map[string]bool, processKey string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	proc := doc
	if processKey != "" {
		p, ok := doc[processKey].(map[string]any)
		if !ok {
			return nil
		}
		proc = p
	}
	caps, ok := proc["capabilities"].(map[string]any)
	if !ok {
		return nil
	}
	changed := false
	for set, v := range caps {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		kept := list[:0:0]
		for _, c := range list {
			if name, ok := c.(string); ok && missing[name] {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, info.Mode().Perm())
}
