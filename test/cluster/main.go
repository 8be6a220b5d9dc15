// Command kube-local is a whole Kubernetes control plane in one binary, one
// component per subcommand. Components must run as separate processes: the
// apiserver's signal handler, feature gates, klog flags and the legacy metrics
// registry are process-global.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata" // CronJob time zones

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

const usage = "usage: kube-local etcd|apiserver|controller-manager|scheduler|node-sim [flags]"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	sub := os.Args[1]
	// Each component parses its own flags from os.Args[1:].
	os.Args = append([]string{"kube-local " + sub}, os.Args[2:]...)
	switch sub {
	case "etcd":
		os.Exit(runEtcd(os.Args[1:]))
	case "apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "node-sim":
		os.Exit(runNodeSim(os.Args[1:]))
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
}
