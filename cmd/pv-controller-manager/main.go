// Command pv-controller-manager runs the Kubernetes PersistentVolume binder outside
// kube-controller-manager, with the patches in patches/series.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	_ "k8s.io/component-base/metrics/prometheus/workqueue" // workqueue_* metrics of the claims and volumes queues

	"github.com/fastpv/pv-controller-manager/cmd/pv-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewPVControllerManagerCommand()))
}
