package clustertorture

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Arm names.
const (
	ArmOurs     = "ours"
	ArmUpstream = "upstream"
)

// replicas runs the binder under test as n processes with leader election, and kills and
// restarts them.
type replicas struct {
	arm     string
	args    []string // the binary and its flags, the kubeconfig the proxy's
	logDir  string
	lock    sync.Mutex
	procs   []*exec.Cmd
	started int
	kills   int
}

// binderCommand is the binder of arm, talking to the apiserver through kubeconfig (the proxy).
// Both arms get the same client QPS and sync period, leader election with short timings (so a
// kill costs seconds, not the default 15), and no serving port (two replicas on one host).
func binderCommand(arm, binDir, toolsBin, kubeconfig, adminKubeconfig string) ([]string, error) {
	common := []string{
		"--kubeconfig=" + kubeconfig,
		"--kube-api-qps=1000", "--kube-api-burst=1000",
		"--pvclaimbinder-sync-period=15s",
		"--leader-elect=true", "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s",
		"--secure-port=0",
		"--authentication-kubeconfig=" + adminKubeconfig, "--authorization-kubeconfig=" + adminKubeconfig,
		"-v=2",
	}
	switch arm {
	case ArmOurs:
		bin := filepath.Join(binDir, "pv-controller-manager")
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("ours: %w (make build)", err)
		}
		return append([]string{bin}, common...), nil
	case ArmUpstream:
		bin := filepath.Join(toolsBin, "kube-controller-manager")
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("upstream: %w (hack/cluster/build-tools.sh kube-controller-manager)", err)
		}
		// KCM of the same release with only its binder; its own Lease, apart from the cluster's KCM
		// (which runs without its binder in both arms).
		return append([]string{bin, "--controllers=persistentvolume-binder-controller", "--leader-elect-resource-name=torture-upstream-binder",
			"--use-service-account-credentials=false"}, common...), nil
	}
	return nil, fmt.Errorf("unknown arm %q", arm)
}

func newReplicas(arm string, args []string, logDir string, n int) (*replicas, error) {
	r := &replicas{arm: arm, args: args, logDir: logDir, procs: make([]*exec.Cmd, n)}
	for i := range n {
		if err := r.start(i); err != nil {
			r.stopAll()
			return nil, err
		}
	}
	return r, nil
}

func (r *replicas) start(i int) error {
	log, err := os.OpenFile(filepath.Join(r.logDir, fmt.Sprintf("%s-%d.log", r.arm, i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.args[0], r.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	go func() { _ = cmd.Wait(); log.Close() }()
	r.procs[i] = cmd
	r.started++
	return nil
}

// killAndRestart SIGKILLs replica i and starts it again after down.
func (r *replicas) killAndRestart(i int, down time.Duration) error {
	r.lock.Lock()
	defer r.lock.Unlock()
	if p := r.procs[i]; p != nil && p.Process != nil {
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		r.kills++
	}
	time.Sleep(down)
	return r.start(i)
}

func (r *replicas) stopAll() {
	r.lock.Lock()
	defer r.lock.Unlock()
	for _, p := range r.procs {
		if p != nil && p.Process != nil {
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, p := range r.procs {
		if p == nil || p.Process == nil {
			continue
		}
		for time.Now().Before(deadline) && syscall.Kill(p.Process.Pid, 0) == nil {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
	}
}
