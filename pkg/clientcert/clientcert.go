package clientcert

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	restclient "k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// ErrChanged is the cause Watch gives its cancel function when the kubeconfig's client
// certificate is no longer the one the process loaded.
var ErrChanged = errors.New("the client certificate of the kubeconfig changed on disk; exiting so that the restarted process uses it")

var (
	expirationGauge = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      "pv_controller_manager",
		Name:           "client_certificate_expiration_timestamp_seconds",
		Help:           "When the client certificate this process authenticates to the API server with expires (its notAfter, in seconds since the epoch). Absent when the kubeconfig holds no client certificate.",
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

// Certificate returns the client certificate a rest config authenticates with (the first of its
// chain), or nil when it has none (a token, an exec plugin).
func Certificate(c *restclient.Config) (*x509.Certificate, []byte, error) {
	data := c.TLSClientConfig.CertData
	if len(data) == 0 && c.TLSClientConfig.CertFile != "" {
		var err error
		if data, err = os.ReadFile(c.TLSClientConfig.CertFile); err != nil {
			return nil, nil, fmt.Errorf("reading the client certificate: %w", err)
		}
	}
	if len(data) == 0 {
		return nil, nil, nil
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the client certificate: %w", err)
	}
	return certs[0], certs[0].Raw, nil
}

// Watcher reports the expiry of the certificate in use and watches the kubeconfig for another.
type Watcher struct {
	// Load reads the kubeconfig again, as the process read it at start.
	Load func() (*restclient.Config, error)
	// Period between two reads of the kubeconfig.
	Period time.Duration

	inUse []byte // DER of the certificate the process authenticates with; nil: none
}

// NewWatcher records the certificate of the config the process uses and sets the gauge from it.
func NewWatcher(inUse *restclient.Config, load func() (*restclient.Config, error), period time.Duration) (*Watcher, error) {
	registerOnce.Do(func() { legacyregistry.MustRegister(expirationGauge) })
	cert, der, err := Certificate(inUse)
	if err != nil {
		return nil, err
	}
	if cert != nil {
		expirationGauge.Set(float64(cert.NotAfter.Unix()))
	}
	return &Watcher{Load: load, Period: period, inUse: der}, nil
}

// Watch reads the kubeconfig every Period until ctx is done. When it holds a certificate other
// than the one in use, Watch calls stop with ErrChanged and returns. A kubeconfig it cannot read
// or parse (a write in progress, a typo) is logged and read again at the next period: the process
// keeps the credentials it has.
func (w *Watcher) Watch(ctx context.Context, stop context.CancelCauseFunc) {
	logger := klog.FromContext(ctx).WithName("client-certificate")
	ticker := time.NewTicker(w.Period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		changed, err := w.changed()
		if err != nil {
			logger.Error(err, "Cannot read the kubeconfig again; keeping the credentials loaded at start")
			continue
		}
		if changed {
			logger.Info("The kubeconfig holds another client certificate; stopping so that the restarted process loads it")
			stop(ErrChanged)
			return
		}
	}
}

func (w *Watcher) changed() (bool, error) {
	config, err := w.Load()
	if err != nil {
		return false, err
	}
	_, der, err := Certificate(config)
	if err != nil {
		return false, err
	}
	return !bytes.Equal(der, w.inUse), nil
}
