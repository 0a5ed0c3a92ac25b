package e2e

// Monitoring as installed, for make e2e-kind's kind-kubeadm pass: a real Prometheus server (built by
// hack/cluster/build-tools.sh from the module hack/monitoring pins, as promtool is) runs beside the
// kind cluster, discovers the binder's replicas through deploy/monitoring/scrape/service.yaml,
// scrapes them as deploy/monitoring/scrape/servicemonitor.yaml says with the token of the
// ServiceAccount that deploy/monitoring/scrape/metrics-reader-binding.yaml names (and nothing else
// grants), and evaluates deploy/monitoring/rules.yaml. The prometheus-operator is not run: the
// scrape configuration is the ServiceMonitor's translation, done here field by field (a field this
// translation does not know fails the spec), and every alert's `for` is cut to promFor so that an
// alert whose expression holds is seen firing within the spec (promtool's tests cover the `for`s).
// kube-state-metrics (built by hack/cluster/build-tools.sh at KUBE_STATE_METRICS_VERSION) runs
// beside it with the test's kubeconfig and is scraped as a static job: the claims' phases and our
// pods that the alerts read (metrics-used.txt, origin external).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const (
	scrapeDir = "../../deploy/monitoring/scrape"
	rulesFile = "../../deploy/monitoring/rules.yaml"
	// promFor replaces every alert's `for` in the rules the test server evaluates.
	promFor = "20s"
)

// serviceMonitor is the part of prometheus-operator's ServiceMonitor that ours uses; Strict
// decoding refuses any other field.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		JobLabel          string `json:"jobLabel"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port            string `json:"port"`
			Scheme          string `json:"scheme"`
			Interval        string `json:"interval"`
			BearerTokenFile string `json:"bearerTokenFile"`
			TLSConfig       struct {
				InsecureSkipVerify bool `json:"insecureSkipVerify"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// promLabel is Prometheus' name for a Kubernetes label in service discovery meta labels.
var promLabelInvalid = regexp.MustCompile(`[^a-zA-Z0-9_]`)

func promLabel(k8sLabel string) string { return promLabelInvalid.ReplaceAllString(k8sLabel, "_") }

// scrapeConfig translates the ServiceMonitor into the scrape job prometheus-operator generates
// for it (role endpoints, kept by the Service's labels and the port name, job from jobLabel), with
// tokenFile in place of the in-pod token path and kubeconfig for the service discovery.
func scrapeConfig(sm serviceMonitor, tokenFile, kubeconfig string) map[string]any {
	Expect(sm.Kind).To(Equal("ServiceMonitor"))
	Expect(sm.Spec.Endpoints).To(HaveLen(1), "the translation knows one endpoint")
	ep := sm.Spec.Endpoints[0]
	Expect(ep.Scheme).To(Equal("https"))
	Expect(ep.BearerTokenFile).To(Equal("/var/run/secrets/kubernetes.io/serviceaccount/token"), "the Prometheus pod's own token")
	relabel := []map[string]any{}
	for k, v := range sm.Spec.Selector.MatchLabels {
		relabel = append(relabel, map[string]any{
			"source_labels": []string{"__meta_kubernetes_service_label_" + promLabel(k)}, "regex": v, "action": "keep",
		})
	}
	relabel = append(relabel,
		map[string]any{"source_labels": []string{"__meta_kubernetes_endpoint_port_name"}, "regex": ep.Port, "action": "keep"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_pod_node_name"}, "target_label": "node"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_service_label_" + promLabel(sm.Spec.JobLabel)}, "target_label": "job"},
	)
	return map[string]any{
		"job_name":        fmt.Sprintf("serviceMonitor/%s/%s/0", sm.Metadata.Namespace, sm.Metadata.Name),
		"scrape_interval": "5s", // the ServiceMonitor's 30s, shortened for the spec
		"scheme":          ep.Scheme,
		"authorization":   map[string]any{"credentials_file": tokenFile},
		"tls_config":      map[string]any{"insecure_skip_verify": ep.TLSConfig.InsecureSkipVerify},
		"kubernetes_sd_configs": []map[string]any{{
			"role": "endpoints", "kubeconfig_file": kubeconfig,
			"namespaces": map[string]any{"names": sm.Spec.NamespaceSelector.MatchNames},
		}},
		"relabel_configs": relabel,
	}
}

// prometheusServer is a Prometheus process on this host.
type prometheusServer struct {
	url string
	cmd *exec.Cmd
	log string
	dir string // its configuration, rules, log and data (the data removed by stop, the log kept)
}

// installScraping applies deploy/monitoring/scrape (the Service, and the binding of the
// metrics-reader role to the scraper's ServiceAccount, which it creates as the monitoring stack
// would) and returns a token of that ServiceAccount and the ServiceMonitor.
func installScraping(ctx context.Context) (token string, sm serviceMonitor) {
	var svc v1.Service
	readYAML(filepath.Join(scrapeDir, "service.yaml"), &svc)
	if _, err := client.CoreV1().Services(svc.Namespace).Create(ctx, &svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	var binding rbacv1.ClusterRoleBinding
	readYAML(filepath.Join(scrapeDir, "metrics-reader-binding.yaml"), &binding)
	Expect(binding.Subjects).To(HaveLen(1))
	scraper := binding.Subjects[0]
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scraper.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	if _, err := client.CoreV1().ServiceAccounts(scraper.Namespace).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: scraper.Name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	tr, err := client.CoreV1().ServiceAccounts(scraper.Namespace).CreateToken(ctx, scraper.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(scrapeDir, "servicemonitor.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.UnmarshalStrict(data, &sm)).To(Succeed(), "servicemonitor.yaml uses a field the translation does not know")
	return strings.TrimSpace(tr.Status.Token), sm
}

func readYAML(path string, into any) {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.UnmarshalStrict(data, into)).To(Succeed(), path)
}

// startPrometheus writes the configuration and the rules (every `for` cut to promFor) into dir and
// starts the server on a free port of this host.
func startPrometheus(ctx context.Context, binary, dir string, jobs ...map[string]any) *prometheusServer {
	rules, err := os.ReadFile(rulesFile)
	Expect(err).NotTo(HaveOccurred())
	cut := regexp.MustCompile(`(?m)^(\s+for: ).*$`).ReplaceAll(rules, []byte("${1}"+promFor))
	Expect(os.WriteFile(filepath.Join(dir, "rules.yaml"), cut, 0o644)).To(Succeed())
	config, err := yaml.Marshal(map[string]any{
		"global":         map[string]any{"scrape_interval": "5s", "evaluation_interval": "5s"},
		"rule_files":     []string{filepath.Join(dir, "rules.yaml")},
		"scrape_configs": jobs,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, "prometheus.yml"), config, 0o644)).To(Succeed())

	addr := freeAddr()
	p := &prometheusServer{url: "http://" + addr, log: filepath.Join(dir, "prometheus.log"), dir: dir}
	logFile, err := os.Create(p.log)
	Expect(err).NotTo(HaveOccurred())
	p.cmd = exec.Command(binary, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	Expect(p.cmd.Start()).To(Succeed())
	GinkgoWriter.Printf("prometheus %s at %s, log %s\n", binary, p.url, p.log)
	Eventually(ctx, func() error {
		resp, err := http.Get(p.url + "/-/ready")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	}).WithTimeout(time.Minute).WithPolling(500*time.Millisecond).Should(Succeed(), "prometheus ready (log %s)", p.log)
	return p
}

// freeAddr returns 127.0.0.1:<a port free now>.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

// kubeStateMetrics is a kube-state-metrics process on this host, watching the cluster of kubeconfig.
type kubeStateMetrics struct {
	addr string
	cmd  *exec.Cmd
	log  string
}

// startKubeStateMetrics runs kube-state-metrics with the resources the alerts read (claims, pods)
// on a free port of this host and waits until it exports our pods.
func startKubeStateMetrics(ctx context.Context, binary, dir, kubeconfig string) *kubeStateMetrics {
	addr, telemetry := freeAddr(), freeAddr()
	host, port, err := net.SplitHostPort(addr)
	Expect(err).NotTo(HaveOccurred())
	_, telemetryPort, err := net.SplitHostPort(telemetry)
	Expect(err).NotTo(HaveOccurred())
	k := &kubeStateMetrics{addr: addr, log: filepath.Join(dir, "kube-state-metrics.log")}
	logFile, err := os.Create(k.log)
	Expect(err).NotTo(HaveOccurred())
	k.cmd = exec.Command(binary, "--kubeconfig="+kubeconfig, "--resources=persistentvolumeclaims,pods",
		"--host="+host, "--port="+port, "--telemetry-host="+host, "--telemetry-port="+telemetryPort)
	k.cmd.Stdout, k.cmd.Stderr = logFile, logFile
	Expect(k.cmd.Start()).To(Succeed())
	GinkgoWriter.Printf("kube-state-metrics %s at %s, log %s\n", binary, addr, k.log)
	Eventually(ctx, func() (string, error) { return k.metrics(ctx) }).WithTimeout(time.Minute).WithPolling(time.Second).
		Should(MatchRegexp(`kube_pod_info\{[^}]*pod="pv-controller-manager-`), "kube-state-metrics exports our pods (log %s)", k.log)
	return k
}

// metrics returns kube-state-metrics' exposition.
func (k *kubeStateMetrics) metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+k.addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("/metrics: %s", resp.Status)
	}
	return string(body), nil
}

// scrapeJob is the static scrape job of kube-state-metrics, as the monitoring stacks scrape it
// (honor_labels: its namespace and pod labels are the objects').
func (k *kubeStateMetrics) scrapeJob() map[string]any {
	return map[string]any{
		"job_name": "kube-state-metrics", "scrape_interval": "5s", "honor_labels": true,
		"static_configs": []map[string]any{{"targets": []string{k.addr}}},
	}
}

func (k *kubeStateMetrics) stop() {
	if k == nil || k.cmd.Process == nil {
		return
	}
	_ = k.cmd.Process.Kill()
	_ = k.cmd.Wait()
}

func (p *prometheusServer) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	_ = os.RemoveAll(filepath.Join(p.dir, "data"))
}

// get decodes the data of a Prometheus API answer.
func (p *prometheusServer) get(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var answer struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return fmt.Errorf("%s: %w: %s", path, err, body)
	}
	if answer.Status != "success" {
		return fmt.Errorf("%s: %s", path, answer.Error)
	}
	return json.Unmarshal(answer.Data, data)
}

type promTarget struct {
	Labels    map[string]string `json:"labels"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

// targets returns the active targets of job.
func (p *prometheusServer) targets(ctx context.Context, job string) ([]promTarget, error) {
	var data struct {
		ActiveTargets []promTarget `json:"activeTargets"`
	}
	if err := p.get(ctx, "/api/v1/targets?state=active", &data); err != nil {
		return nil, err
	}
	var out []promTarget
	for _, t := range data.ActiveTargets {
		if t.Labels["job"] == job {
			out = append(out, t)
		}
	}
	return out, nil
}

// evaluatedSince waits until every rule group has been evaluated after t: an alert is pending
// from Prometheus' first evaluation, before its first scrape, until the next one.
func (p *prometheusServer) evaluatedSince(ctx context.Context, t time.Time) error {
	var data struct {
		Groups []struct {
			Name           string    `json:"name"`
			LastEvaluation time.Time `json:"lastEvaluation"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", &data); err != nil {
		return err
	}
	if len(data.Groups) == 0 {
		return fmt.Errorf("no rule group loaded")
	}
	for _, g := range data.Groups {
		if !g.LastEvaluation.After(t) {
			return fmt.Errorf("group %s last evaluated at %s, not after %s", g.Name, g.LastEvaluation, t)
		}
	}
	return nil
}

// alerts returns "name state" for every alert that is pending or firing.
func (p *prometheusServer) alerts(ctx context.Context) ([]string, error) {
	var data struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	if err := p.get(ctx, "/api/v1/alerts", &data); err != nil {
		return nil, err
	}
	out := []string{}
	for _, a := range data.Alerts {
		out = append(out, a.Labels["alertname"]+" "+a.State)
	}
	return out, nil
}

// sample returns the value of an instant query that must select one series.
func (p *prometheusServer) sample(ctx context.Context, query string) (float64, error) {
	var data struct {
		Result []struct {
			Value []any `json:"value"`
		} `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query?query="+url.QueryEscape(query), &data); err != nil {
		return 0, err
	}
	if len(data.Result) != 1 || len(data.Result[0].Value) != 2 {
		return 0, fmt.Errorf("%s: %d series, want 1", query, len(data.Result))
	}
	s, _ := data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}
