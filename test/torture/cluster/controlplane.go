package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// Control-plane components the torture crashes and restarts.
const (
	ComponentAPIServer = "kube-apiserver"
	ComponentEtcd      = "etcd"
)

// supervisedComponents are restarted when they exit, as a kubelet restarts a static pod:
// kube-scheduler and kube-controller-manager exit when they lose their leader Lease, which an
// apiserver or etcd crash longer than their renew deadline costs them. Without this, a cluster
// whose scheduler had exited placed no pod for the rest of a 30-minute run and the run passed.
var supervisedComponents = []string{"kube-scheduler", "kube-controller-manager"}

// process is what starts a component again: its command line, directory and environment.
type process struct {
	argv []string
	dir  string
	env  []string
}

// controlPlane crashes and restarts the local cluster's etcd and kube-apiserver, and compacts
// etcd. kwokctl's binary runtime runs one process per component and keeps its pid in
// <cluster>/pids/<component>.pid and its output in <cluster>/logs/<component>.log: a restart is
// the same command line, directory and environment started again, its pid written back so that
// kwokctl still stops it.
type controlPlane struct {
	dir          string
	etcdEndpoint string
	client       clientset.Interface
	restarts     map[string]int
	compactions  int
	// supervised: the command of each supervised component, read while it ran; exits counts
	// the times one exited by itself and was started again.
	supervised map[string]process
	mu         sync.Mutex
	exits      map[string]int
}

func newControlPlane(dir string, client clientset.Interface) (*controlPlane, error) {
	argv, _, _, err := processOf(filepath.Join(dir, "pids", ComponentEtcd+".pid"))
	if err != nil {
		return nil, fmt.Errorf("--cluster-dir %s: %w", dir, err)
	}
	endpoint := ""
	for _, arg := range argv {
		if urls, ok := strings.CutPrefix(arg, "--listen-client-urls="); ok {
			endpoint = strings.Split(urls, ",")[0]
		}
	}
	if endpoint == "" {
		return nil, fmt.Errorf("etcd's command line has no --listen-client-urls")
	}
	endpoint = strings.Replace(endpoint, "0.0.0.0", "127.0.0.1", 1)
	c := &controlPlane{dir: dir, etcdEndpoint: endpoint, client: client, restarts: map[string]int{},
		supervised: map[string]process{}, exits: map[string]int{}}
	for _, component := range supervisedComponents {
		argv, wd, env, err := processOf(filepath.Join(dir, "pids", component+".pid"))
		if err != nil {
			return nil, fmt.Errorf("%s must be running: %w", component, err)
		}
		c.supervised[component] = process{argv: argv, dir: wd, env: env}
	}
	return c, nil
}

// supervise starts a supervised component again whenever it has exited, checking every period
// until ctx ends.
func (c *controlPlane) supervise(ctx context.Context, period time.Duration) {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
		for _, component := range supervisedComponents {
			pidFile := filepath.Join(c.dir, "pids", component+".pid")
			if running(pidFile) {
				continue
			}
			logger.Info("Cluster torture: a control-plane component exited, starting it again", "component", component)
			if err := c.start(component, c.supervised[component]); err != nil {
				logger.Error(err, "Cluster torture: starting a control-plane component again", "component", component)
				continue
			}
			c.mu.Lock()
			c.exits[component]++
			c.mu.Unlock()
		}
	}
}

// exited returns how often each supervised component exited by itself.
func (c *controlPlane) exited() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.exits)
}

// running tells whether the process of a pid file is alive (not gone, not a zombie).
func running(pidFile string) bool {
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(raw)) + "/stat")
	return err == nil && !zombie(stat)
}

// start runs a component's command, its output appended to its log, and writes its pid file so
// that kwokctl still stops it.
func (c *controlPlane) start(component string, p process) error {
	log, err := os.OpenFile(filepath.Join(c.dir, "logs", component+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.dir, p.env, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", component, err)
	}
	go func() { _ = cmd.Wait() }() // reaped by us until the torture ends
	return os.WriteFile(filepath.Join(c.dir, "pids", component+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}

// processOf reads a running process's command line, directory and environment from its pid file.
func processOf(pidFile string) (argv []string, dir string, env []string, err error) {
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return nil, "", nil, err
	}
	pid := strings.TrimSpace(string(raw))
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		return nil, "", nil, fmt.Errorf("process %s of %s: %w", pid, pidFile, err)
	}
	environ, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		return nil, "", nil, err
	}
	dir, err = os.Readlink("/proc/" + pid + "/cwd")
	if err != nil {
		return nil, "", nil, err
	}
	split := func(b []byte) []string {
		var out []string
		for _, s := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
			out = append(out, string(s))
		}
		return out
	}
	return split(cmdline), dir, split(environ), nil
}

// restart SIGKILLs component (a crash: no graceful shutdown), keeps it down for down, starts it
// again and waits until the apiserver is ready again.
func (c *controlPlane) restart(ctx context.Context, component string, down time.Duration) error {
	pidFile := filepath.Join(c.dir, "pids", component+".pid")
	argv, dir, env, err := processOf(pidFile)
	if err != nil {
		return err
	}
	raw, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return fmt.Errorf("%s: %w", pidFile, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing %s (pid %d): %w", component, pid, err)
	}
	// Gone, or a zombie nobody reaps (its ports are free either way).
	for deadline := time.Now().Add(30 * time.Second); ; {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || zombie(stat) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) still running 30s after SIGKILL", component, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case <-ctx.Done():
	case <-time.After(down):
	}
	if err := c.start(component, process{argv: argv, dir: dir, env: env}); err != nil {
		return err
	}
	c.restarts[component]++
	return c.waitReady(ctx, component)
}

func zombie(stat []byte) bool {
	// pid (comm) state ...: comm may hold spaces, the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// waitReady polls the apiserver's /readyz (which includes etcd) until it answers ok.
func (c *controlPlane) waitReady(ctx context.Context, component string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		body, err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the apiserver is not ready 2m after %s restarted: %v", component, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// compact compacts etcd to its current revision: every watch that resumes from an older
// resourceVersion (the apiserver's own watch of etcd after a restart, and through it the
// informers) gets 410 Gone and relists.
func (c *controlPlane) compact(ctx context.Context) error {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{c.etcdEndpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer client.Close()
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	status, err := client.Status(callCtx, c.etcdEndpoint)
	if err != nil {
		return fmt.Errorf("etcd status: %w", err)
	}
	// Nothing written since the last compaction: etcd answers "required revision has been compacted".
	if _, err := client.Compact(callCtx, status.Header.Revision); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("etcd compact to %d: %w", status.Header.Revision, err)
	}
	c.compactions++
	return nil
}
