package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
)

// Orders in which the pair scenarios (prebound, claimref, matched-pair) create each pair; each order is a
// scenario of its own name (prebound, prebound-claim-first, prebound-together, ...).
const (
	OrderPVFirst    = "pv-first"    // the PV, then its claim (the default)
	OrderClaimFirst = "claim-first" // the claim, then its PV
	OrderTogether   = "together"    // both at once, from two goroutines
)

var pairOrders = []string{OrderPVFirst, OrderClaimFirst, OrderTogether}

// pairs is a scenario that creates N PV/PVC pairs in one order; prebound.go and claimref.go say
// how a pair is tied.
type pairs struct {
	base
	kind  string // ScenarioPrebound, ScenarioClaimRef or ScenarioMatchedPair
	order string
	help  string
	bench Bench
	shape func(c *Config, i int, claim *v1.PersistentVolumeClaim, volume *v1.PersistentVolume)
	// anyVolume: the pair is not tied (matched-pair): a claim may get any volume, one to one.
	anyVolume bool
}

// registerPairs registers kind in every order; the other orders run COUNT pairs and are not in make
// bench's default set.
func registerPairs(p pairs) {
	for _, order := range pairOrders {
		p.order = order
		if order != OrderPVFirst {
			p.bench = Bench{Counts: "COUNT"}
		}
		Register(p)
	}
}

func (p pairs) Name() string {
	if p.order == OrderPVFirst {
		return p.kind
	}
	return p.kind + "-" + p.order
}

func (p pairs) Help() string {
	switch p.order {
	case OrderClaimFirst:
		return p.help + "; each claim created before its PV"
	case OrderTogether:
		return p.help + "; each PV and claim created at once"
	}
	return p.help
}

func (p pairs) Bench() Bench { return p.bench }

func (p pairs) Shape(c *Config, i int, claim *v1.PersistentVolumeClaim, volume *v1.PersistentVolume) {
	p.shape(c, i, claim, volume)
}

// labels: results name the kind and the order apart, as they always have.
func (p pairs) labels() (scenario, order string) { return p.kind, p.order }

func (p pairs) Create(ctx context.Context, env *Env) (time.Time, error) {
	start := time.Now()
	cfg := env.Config
	return start, env.ForEach(ctx, func(i int) error {
		if err := createPair(ctx, env, p.order, i); err != nil {
			return err
		}
		if cfg.WithPods {
			_, err := env.Client.CoreV1().Pods(cfg.Namespace).Create(ctx, cfg.Pod(i), metav1.CreateOptions{})
			return err
		}
		return nil
	})
}

// WritesAfterStart: the N PVs and N claims, and 4 writes per bind.
func (pairs) WritesAfterStart(n int) int { return 2*n + 4*n }

func (p pairs) CheckBind(c *Config, claim *v1.PersistentVolumeClaim) string {
	if p.anyVolume {
		return "" // Verify checks one to one
	}
	return ownVolume(c, claim)
}

// createPair creates the i-th PV and claim in order. A claim's latency counts from its own create
// call, or, when both are sent at once, from the first of the two.
func createPair(ctx context.Context, env *Env, order string, i int) error {
	cfg, client := env.Config, env.Client
	switch order {
	case OrderClaimFirst:
		env.Started(cfg.name(i))
		if err := createClaim(ctx, client, cfg.Claim(i)); err != nil {
			return err
		}
		return createVolume(ctx, client, cfg.Volume(i))
	case OrderTogether:
		env.Started(cfg.name(i))
		volumeErr := make(chan error, 1)
		go func() { volumeErr <- createVolume(ctx, client, cfg.Volume(i)) }()
		claimErr := createClaim(ctx, client, cfg.Claim(i))
		return errors.Join(claimErr, <-volumeErr)
	case OrderPVFirst:
		if err := createVolume(ctx, client, cfg.Volume(i)); err != nil {
			return err
		}
		env.Started(cfg.name(i))
		return createClaim(ctx, client, cfg.Claim(i))
	}
	return fmt.Errorf("loadgen: unknown order %q", order)
}

func createVolume(ctx context.Context, client clientset.Interface, pv *v1.PersistentVolume) error {
	_, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	return err
}

func createClaim(ctx context.Context, client clientset.Interface, pvc *v1.PersistentVolumeClaim) error {
	_, err := client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
	return err
}
