package torture

import "testing"

// The end states of seed 1796164846233840766 (make torture, 2026-12-01): ns1/c-6 pre-bound to
// pv-0 was deleted and created again. Ours bound the first c-6 before its deletion (so pv-0, Retain,
// went Released and the second c-6 stays Pending); upstream, slower through the faults, had not
// bound the first, so it bound the second. Legitimate for ours; the same end with pv-0 free would not be.
func TestCompareEndsClaimRecreatedOverAReleasedVolume(t *testing.T) {
	ours := result{
		Claims:  map[string]string{"ns1/c-6": "Pending pv-0", "ns2/c-5": "Bound pv-1"},
		Volumes: map[string]string{"pv-0": "Released ns1/c-6", "pv-1": "Bound ns2/c-5"},
	}
	upstream := result{
		Claims:  map[string]string{"ns1/c-6": "Bound pv-0", "ns2/c-5": "Bound pv-1"},
		Volumes: map[string]string{"pv-0": "Bound ns1/c-6", "pv-1": "Bound ns2/c-5"},
	}
	if got, detail := compareEnds(ours, upstream); got != outcomeEarlierClaim {
		t.Errorf("Released from the earlier claim: outcome %q (%s), want %q", got, detail, outcomeEarlierClaim)
	}
	ours.Volumes["pv-0"] = "Available "
	if got, _ := compareEnds(ours, upstream); got != outcomeUpstreamMore {
		t.Errorf("pv-0 free and the claim Pending: outcome %q, want %q (a failure)", got, outcomeUpstreamMore)
	}
}
