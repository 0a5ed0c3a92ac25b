package cluster

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
	// exits counts the replicas that exited by themselves (a lost Lease), restarted a second
	// later as the kubelet restarts a static pod.
	exits int
	// panics: replicas that exited with a Go panic's exit code (2), e.g. the cache mutation
	// detector finding an informer's object changed in place. Each is a violation.
	panics   []string
	stopping bool
}

// binderCommand is the binder of arm, talking to the apiserver through kubeconfig (the proxy).
// Both arms get the same client QPS and sync period, leader election with short timings (so a
// kill costs seconds, not the default 15), and no serving port (two replicas on one host).
// fastLease: a 4 s Lease (renewed within 3 s), so that a killed leader is replaced within seconds;
// otherwise KCM's defaults (15 s, 10 s), which an outage of a few seconds does not cost the Lease.
func binderCommand(arm, binDir, toolsBin, kubeconfig, adminKubeconfig string, fastLease bool) ([]string, error) {
	lease := []string{"--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}
	if fastLease {
		lease = []string{"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s"}
	}
	common := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--kube-api-qps=1000", "--kube-api-burst=1000",
		"--pvclaimbinder-sync-period=15s",
		"--leader-elect=true"}, lease...)
	common = append(common,
		"--secure-port=0",
		"--authentication-kubeconfig="+adminKubeconfig, "--authorization-kubeconfig="+adminKubeconfig,
		"-v=2",
	)
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
	r.procs[i] = cmd
	r.started++
	go func() {
		_ = cmd.Wait()
		log.Close()
		r.lock.Lock()
		defer r.lock.Unlock()
		if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 2 {
			r.panics = append(r.panics, fmt.Sprintf("%s replica %d (pid %d) exited with code 2, a Go panic: see %s",
				r.arm, i, cmd.Process.Pid, filepath.Join(r.logDir, fmt.Sprintf("%s-%d.log", r.arm, i))))
		}
		if r.stopping || r.procs[i] != cmd {
			return // stopped, or killed and restarted by killAndRestart
		}
		r.exits++
		r.procs[i] = nil
		go func() {
			time.Sleep(time.Second) // the kubelet's restart delay, not a synchronisation
			r.lock.Lock()
			defer r.lock.Unlock()
			if !r.stopping && r.procs[i] == nil {
				_ = r.start(i)
			}
		}()
	}()
	return nil
}

// killAndRestart SIGKILLs replica i and starts it again after down.
func (r *replicas) killAndRestart(i int, down time.Duration) error {
	r.lock.Lock()
	p := r.procs[i]
	r.procs[i] = nil // its exit is ours, not one to restart
	if p != nil && p.Process != nil {
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		r.kills++
	}
	r.lock.Unlock()
	time.Sleep(down)
	r.lock.Lock()
	defer r.lock.Unlock()
	if r.stopping || r.procs[i] != nil {
		return nil
	}
	return r.start(i)
}

func (r *replicas) stopAll() {
	r.lock.Lock()
	r.stopping = true
	procs := append([]*exec.Cmd(nil), r.procs...)
	r.lock.Unlock()
	for _, p := range procs {
		if p != nil && p.Process != nil {
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, p := range procs {
		if p == nil || p.Process == nil {
			continue
		}
		for time.Now().Before(deadline) && syscall.Kill(p.Process.Pid, 0) == nil {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
	}
}

func (r *replicas) panicked() []string {
	r.lock.Lock()
	defer r.lock.Unlock()
	return append([]string(nil), r.panics...)
}
