// Release seam: the code of our integration tests that differs between release lines. A line where
// it differs carries its own copy of this file at releases/<line>/src/test/integration/volume/
// (v1.38: the test context's package moved to the k8s.io/ktesting module); pvcm_test.go and
// pvcm_shadow_test.go are the same on every line (hack/verify/verify-release-seams.sh).

package volume

import (
	"testing"

	"k8s.io/kubernetes/test/utils/ktesting"
)

type testContext = ktesting.TContext

func initTestContext(t *testing.T) testContext { return ktesting.Init(t) }
