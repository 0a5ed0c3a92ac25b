// Release seam of v1.38: this line's copy of test/integration/volume/release_seam_test.go.

package volume

import (
	"testing"

	"k8s.io/ktesting"
)

type testContext = ktesting.TContext

func initTestContext(t *testing.T) testContext { return ktesting.Init(t) }
