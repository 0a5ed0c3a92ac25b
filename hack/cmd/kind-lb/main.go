// kind-lb stands in for the Envoy image that kind (v0.33) runs as the load balancer in front of
// the API servers of a multi-control-plane cluster, where no registry can serve that image.
//
// It speaks the part of Envoy's interface kind uses: started as `envoy -c envoy.yaml`, it reads the
// CDS and LDS file paths from that bootstrap file and follows those files (kind rewrites them when
// control-plane nodes join); the listener is a TCP proxy on the LDS port to the CDS endpoints,
// round robin. Like kind's Envoy config it health-checks each endpoint (HTTPS GET /healthz every 2s,
// certificate not verified, unhealthy after 2 failures, healthy after 1 success); unlike it, it
// also closes the connections of an endpoint that turns unhealthy, so clients reconnect through a
// live API server at once rather than after their own timeouts (a node stopped mid-test).
//
// Run as "bash" (a symlink in the image) it execs busybox's shell: kind's bootstrap command is
// `bash -c '...'` and the image has no bash.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

func main() {
	if filepath.Base(os.Args[0]) == "bash" {
		err := syscall.Exec("/bin/busybox", append([]string{"sh"}, os.Args[1:]...), os.Environ())
		log.Fatalf("exec busybox sh: %v", err)
	}
	bootstrap := flag.String("c", "/home/envoy/envoy.yaml", "Envoy bootstrap file naming the CDS and LDS files")
	flag.Parse()
	cds, lds, err := readBootstrap(*bootstrap)
	if err != nil {
		log.Fatal(err)
	}
	lb := &balancer{health: map[string]*backendState{}}
	log.Printf("kind-lb: following %s and %s", cds, lds)
	lb.run(context.Background(), cds, lds, 250*time.Millisecond)
}

type bootstrapFile struct {
	DynamicResources struct {
		CDS struct {
			PathConfigSource struct {
				Path string `json:"path"`
			} `json:"path_config_source"`
		} `json:"cds_config"`
		LDS struct {
			PathConfigSource struct {
				Path string `json:"path"`
			} `json:"path_config_source"`
		} `json:"lds_config"`
	} `json:"dynamic_resources"`
}

func readBootstrap(file string) (cds, lds string, err error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	var b bootstrapFile
	if err := yaml.Unmarshal(raw, &b); err != nil {
		return "", "", fmt.Errorf("%s: %w", file, err)
	}
	cds, lds = b.DynamicResources.CDS.PathConfigSource.Path, b.DynamicResources.LDS.PathConfigSource.Path
	if cds == "" || lds == "" {
		return "", "", fmt.Errorf("%s: no cds_config or lds_config path", file)
	}
	return cds, lds, nil
}

type socketAddress struct {
	Address   string `json:"address"`
	PortValue int    `json:"port_value"`
}

type resources struct {
	Resources []struct {
		Address struct {
			SocketAddress socketAddress `json:"socket_address"`
		} `json:"address"`
		LoadAssignment struct {
			Endpoints []struct {
				LBEndpoints []struct {
					Endpoint struct {
						Address struct {
							SocketAddress socketAddress `json:"socket_address"`
						} `json:"address"`
					} `json:"endpoint"`
				} `json:"lb_endpoints"`
			} `json:"endpoints"`
		} `json:"load_assignment"`
	} `json:"resources"`
}

// listenPort is the first LDS listener's port, 0 when there is none yet.
func listenPort(raw []byte) (int, error) {
	var r resources
	if err := yaml.Unmarshal(raw, &r); err != nil {
		return 0, err
	}
	for _, l := range r.Resources {
		if p := l.Address.SocketAddress.PortValue; p != 0 {
			return p, nil
		}
	}
	return 0, nil
}

// endpoints lists host:port of every CDS endpoint.
func endpoints(raw []byte) ([]string, error) {
	var r resources
	if err := yaml.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range r.Resources {
		for _, e := range c.LoadAssignment.Endpoints {
			for _, lb := range e.LBEndpoints {
				a := lb.Endpoint.Address.SocketAddress
				out = append(out, net.JoinHostPort(a.Address, fmt.Sprint(a.PortValue)))
			}
		}
	}
	return out, nil
}

type backendState struct {
	healthy  bool
	failures int
	conns    map[net.Conn]bool
}

type balancer struct {
	mu       sync.Mutex
	backends []string
	health   map[string]*backendState
	next     int
}

func (b *balancer) run(ctx context.Context, cdsFile, ldsFile string, every time.Duration) {
	var lastCDS, lastLDS string
	port := 0
	go b.healthLoop(ctx, 2*time.Second)
	for {
		if raw, err := os.ReadFile(cdsFile); err == nil && string(raw) != lastCDS {
			if eps, err := endpoints(raw); err == nil {
				lastCDS = string(raw)
				b.setBackends(eps)
				log.Printf("kind-lb: endpoints %v", eps)
			}
		}
		if raw, err := os.ReadFile(ldsFile); err == nil && string(raw) != lastLDS {
			if p, err := listenPort(raw); err == nil {
				lastLDS = string(raw)
				if p != 0 && port == 0 {
					port = p
					go b.serve(fmt.Sprintf(":%d", p))
				} else if p != port {
					log.Printf("kind-lb: listener port changed to %d; keeping %d", p, port)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func (b *balancer) setBackends(eps []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = eps
	for _, e := range eps {
		if b.health[e] == nil {
			// New endpoints are tried at once; the health check takes them out if they fail.
			b.health[e] = &backendState{healthy: true, conns: map[net.Conn]bool{}}
		}
	}
}

// order is the backends to try for one connection: healthy ones first, round robin.
func (b *balancer) order() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var healthy, unhealthy []string
	n := len(b.backends)
	for i := 0; i < n; i++ {
		e := b.backends[(b.next+i)%n]
		if b.health[e].healthy {
			healthy = append(healthy, e)
		} else {
			unhealthy = append(unhealthy, e)
		}
	}
	b.next++
	return append(healthy, unhealthy...)
}

func (b *balancer) track(backend string, c net.Conn, add bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if add {
		b.health[backend].conns[c] = true
	} else {
		delete(b.health[backend].conns, c)
	}
}

func (b *balancer) serve(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("kind-lb: listen %s: %v", addr, err)
	}
	log.Printf("kind-lb: listening on %s", addr)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Printf("kind-lb: accept: %v", err)
			continue
		}
		go b.proxy(c)
	}
}

func (b *balancer) proxy(client net.Conn) {
	defer client.Close()
	for _, backend := range b.order() {
		upstream, err := net.DialTimeout("tcp", backend, time.Second)
		if err != nil {
			continue
		}
		b.track(backend, client, true)
		defer b.track(backend, client, false)
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(upstream, client); done <- struct{}{} }()
		go func() { _, _ = io.Copy(client, upstream); done <- struct{}{} }()
		<-done
		upstream.Close()
		return
	}
}

func (b *balancer) healthLoop(ctx context.Context, every time.Duration) {
	client := &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true},
	}
	for {
		b.mu.Lock()
		eps := append([]string(nil), b.backends...)
		b.mu.Unlock()
		var wg sync.WaitGroup
		for _, e := range eps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get("https://" + e + "/healthz")
				ok := err == nil && resp.StatusCode == http.StatusOK
				if resp != nil {
					resp.Body.Close()
				}
				b.report(e, ok)
			}()
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// report records one health check; two failures in a row make the endpoint unhealthy and close
// the connections proxied to it.
func (b *balancer) report(backend string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.health[backend]
	if ok {
		if !s.healthy {
			log.Printf("kind-lb: %s healthy", backend)
		}
		s.healthy, s.failures = true, 0
		return
	}
	s.failures++
	if s.failures >= 2 && s.healthy {
		s.healthy = false
		log.Printf("kind-lb: %s unhealthy; closing %d connections", backend, len(s.conns))
		for c := range s.conns {
			c.Close()
		}
	}
}
