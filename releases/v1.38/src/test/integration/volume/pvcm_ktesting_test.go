package volume

// The test context of our integration tests. Its package moved in v1.38 (k8s.io/ktesting, out of
// k8s.io/kubernetes/test/utils/ktesting): releases/v1.38/src/ holds that line's copy of this file,
// so that pvcm_test.go and pvcm_shadow_test.go are the same on every line.

import (
	"testing"

	"k8s.io/ktesting"
)

type testContext = ktesting.TContext

func initTestContext(t *testing.T) testContext { return ktesting.Init(t) }
