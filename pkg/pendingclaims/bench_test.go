package pendingclaims

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// BenchmarkEvaluate100k is one scrape at the largest scale measured: 100 000 volumes, 100 000 claims
// of which 1000 are Pending and old, none of them fitting any volume (the most work per claim).
func BenchmarkEvaluate100k(b *testing.B) {
	const volumes, claims, pending = 100_000, 100_000, 1000
	var cs []*v1.PersistentVolumeClaim
	var vs []*v1.PersistentVolume
	for i := range volumes {
		vs = append(vs, volume(fmt.Sprintf("pv-%d", i), "fast", "1Gi", nil, v1.VolumeAvailable))
	}
	for i := range claims {
		c := claim(fmt.Sprintf("c-%d", i), 10*time.Minute, "fast", "", "1Gi")
		if i < pending {
			c.Spec.Resources.Requests[v1.ResourceStorage] = resourceMust("2Gi")
		} else {
			c.Status.Phase = v1.ClaimBound
		}
		cs = append(cs, c)
	}
	c := collector(b, cs, vs)
	b.ResetTimer()
	for range b.N {
		counts, _ := c.Evaluate()
		if len(counts) != 0 {
			b.Fatalf("counted %v", counts)
		}
	}
}

func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }
