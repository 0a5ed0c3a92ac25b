package clientcert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/metrics/testutil"
)

// newCert returns a PEM certificate and key for CN valid until notAfter.
func newCert(t *testing.T, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "system:pv-controller-manager"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// writeKubeconfig writes a kubeconfig as kubeadm writes one: the certificate and key embedded.
// It replaces the file by a rename, as the identity script does.
func writeKubeconfig(t *testing.T, path string, certPEM, keyPEM []byte) {
	t.Helper()
	config := clientcmdapi.NewConfig()
	config.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", InsecureSkipTLSVerify: true}
	config.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	config.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	config.CurrentContext = "x"
	if err := clientcmd.WriteToFile(*config, path+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

func load(path string) func() (*restclient.Config, error) {
	return func() (*restclient.Config, error) { return clientcmd.BuildConfigFromFlags("", path) }
}

func TestExpirationGaugeIsTheCertificateInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	notAfter := time.Now().Add(10 * 24 * time.Hour).Truncate(time.Second)
	certPEM, keyPEM := newCert(t, notAfter)
	writeKubeconfig(t, path, certPEM, keyPEM)
	config, err := load(path)()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewWatcher(config, load(path), time.Hour); err != nil {
		t.Fatal(err)
	}
	got, err := testutil.GetGaugeMetricValue(expirationGauge)
	if err != nil {
		t.Fatal(err)
	}
	if int64(got) != notAfter.Unix() {
		t.Fatalf("gauge %v, want the certificate's notAfter %d", got, notAfter.Unix())
	}
}

func TestCertificateFromAFileAndWithoutOne(t *testing.T) {
	dir := t.TempDir()
	notAfter := time.Now().Add(time.Hour).Truncate(time.Second)
	certPEM, _ := newCert(t, notAfter)
	if err := os.WriteFile(filepath.Join(dir, "client.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _, err := Certificate(&restclient.Config{TLSClientConfig: restclient.TLSClientConfig{CertFile: filepath.Join(dir, "client.crt")}})
	if err != nil || cert == nil || !cert.NotAfter.Equal(notAfter) {
		t.Fatalf("certificate from a file: %v, %v; want notAfter %v", cert, err, notAfter)
	}
	cert, _, err = Certificate(&restclient.Config{BearerToken: "token"})
	if err != nil || cert != nil {
		t.Fatalf("a token kubeconfig: %v, %v; want no certificate and no error", cert, err)
	}
	if _, _, err := Certificate(&restclient.Config{TLSClientConfig: restclient.TLSClientConfig{CertData: []byte("not a certificate")}}); err == nil {
		t.Fatal("no error for data that is not a certificate")
	}
}

// The watcher stops the process for a renewed certificate, and only for that: the same file
// written again, or a kubeconfig it cannot parse, keeps it running.
func TestWatcherStopsOnlyForAnotherCertificate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	certPEM, keyPEM := newCert(t, time.Now().Add(24*time.Hour))
	writeKubeconfig(t, path, certPEM, keyPEM)
	config, err := load(path)()
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWatcher(config, load(path), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		write func()
	}{
		{"the same certificate written again", func() { writeKubeconfig(t, path, certPEM, keyPEM) }},
		{"a file that does not parse", func() {
			if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\nusers: [[["), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		tc.write()
		changed, err := w.changed()
		if changed {
			t.Fatalf("%s: seen as another certificate (err %v)", tc.name, err)
		}
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Watch(ctx, cancel)
	}()
	renewedPEM, renewedKey := newCert(t, time.Now().Add(365*24*time.Hour))
	writeKubeconfig(t, path, renewedPEM, renewedKey)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not notice the renewed certificate within 30 s")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, ErrChanged) {
		t.Fatalf("cause %v, want ErrChanged", cause)
	}
}
