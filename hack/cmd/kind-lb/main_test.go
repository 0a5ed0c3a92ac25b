package main

import (
	"bufio"
	"net"
	"reflect"
	"testing"
	"time"
)

// What kind v0.33 writes (pkg/cluster/internal/loadbalancer, two control-plane nodes).
const kindLDS = `
resources:
- "@type": type.googleapis.com/envoy.config.listener.v3.Listener
  name: listener_apiserver
  address:
    socket_address:
      address: "0.0.0.0"
      port_value: 6443
`

const kindCDS = `
resources:
- "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
  name: kube_apiservers
  connect_timeout: 0.25s
  type: STRICT_DNS
  load_assignment:
    cluster_name: kube_apiservers
    endpoints:
    - lb_endpoints:
      - endpoint:
          address:
            socket_address:
              address: pv-kind-control-plane
              port_value: 6443
      - endpoint:
          address:
            socket_address:
              address: pv-kind-control-plane2
              port_value: 6443
`

func TestParseKindConfig(t *testing.T) {
	port, err := listenPort([]byte(kindLDS))
	if err != nil || port != 6443 {
		t.Fatalf("listenPort = %d, %v; want 6443", port, err)
	}
	eps, err := endpoints([]byte(kindCDS))
	want := []string{"pv-kind-control-plane:6443", "pv-kind-control-plane2:6443"}
	if err != nil || !reflect.DeepEqual(eps, want) {
		t.Fatalf("endpoints = %v, %v; want %v", eps, err, want)
	}
	if port, err := listenPort([]byte("resources: []")); err != nil || port != 0 {
		t.Fatalf("empty LDS: %d, %v", port, err)
	}
}

// echoServer answers each line with its own name, so a client sees which backend it reached.
func echoServer(t *testing.T, name string) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					_, _ = c.Write([]byte(name + "\n"))
				}
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close() }
}

func TestProxyRoundRobinSkipsDeadAndClosesOnUnhealthy(t *testing.T) {
	a, stopA := echoServer(t, "a")
	defer stopA()
	b, stopB := echoServer(t, "b")
	lb := &balancer{health: map[string]*backendState{}}
	dead := "127.0.0.1:1" // nothing listens
	lb.setBackends([]string{a, dead, b})
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := front.Accept()
			if err != nil {
				return
			}
			go lb.proxy(c)
		}
	}()
	ask := func(c net.Conn) (string, error) {
		if _, err := c.Write([]byte("who\n")); err != nil {
			return "", err
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		return bufio.NewReader(c).ReadString('\n')
	}
	seen := map[string]int{}
	var toB net.Conn
	for i := 0; i < 6; i++ {
		c, err := net.Dial("tcp", front.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		got, err := ask(c)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		seen[got]++
		if got == "b\n" && toB == nil {
			toB = c
		} else {
			defer c.Close()
		}
	}
	if seen["a\n"] == 0 || seen["b\n"] == 0 || len(seen) != 2 {
		t.Fatalf("answers %v: want both live backends and nothing else", seen)
	}
	// b fails its health checks twice: its proxied connection is closed.
	stopB()
	lb.report(b, false)
	lb.report(b, false)
	_ = toB.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := bufio.NewReader(toB).ReadString('\n'); err == nil {
		t.Fatal("connection to the unhealthy backend still open")
	}
	if order := lb.order(); order[0] != a {
		t.Fatalf("order %v: want the healthy backend first", order)
	}
}
