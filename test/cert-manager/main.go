// Command cert-manager-local runs cert-manager's own controllers, compiled from the
// github.com/cert-manager/cert-manager module, against the local control plane. The
// upstream controller binary is a module of its own that the module proxy does not
// serve; this main starts the controllers the way its cmd/controller/app does: one
// ContextFactory from a kubeconfig, each enabled controller built from the registry
// that the controller packages fill from init(), run with its workers, then the
// shared informer factories started. Only what the previews need is linked in: the
// certificates controllers, the CertificateRequest approver and its CA and
// self-signed signers, and the (Cluster)Issuer controllers with those two issuer
// types. Leader election, the metrics, healthz and pprof servers, ACME, Vault,
// Venafi and the ingress/gateway shims are left out; so is the webhook, a separate
// upstream component.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// The controllers started, by the names they register under (upstream's defaults minus
// ACME, Vault, Venafi, the shims and the metrics controller).
var enabledControllers = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	approver.ControllerName,
	crca.CRControllerName,
	crselfsigned.CRControllerName,
	trigger.ControllerName,
	issuing.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
}

type options struct {
	kubeconfig               string
	clusterResourceNamespace string
	workers                  int
	qps                      float32
	burst                    int
	logging                  *logsapi.LoggingConfiguration
}

func main() {
	opts := options{logging: logsapi.NewLoggingConfiguration()}
	fs := pflag.NewFlagSet("cert-manager-local", pflag.ExitOnError)
	fs.StringVar(&opts.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to run against (required)")
	fs.StringVar(&opts.clusterResourceNamespace, "cluster-resource-namespace", "cert-manager",
		"namespace of the Secrets that ClusterIssuers refer to")
	fs.IntVar(&opts.workers, "concurrent-workers", 5, "workers per controller (upstream's default)")
	fs.Float32Var(&opts.qps, "kube-api-qps", 20, "client QPS when the API server has no priority and fairness")
	fs.IntVar(&opts.burst, "kube-api-burst", 50, "client burst when the API server has no priority and fairness")
	logf.AddFlags(opts.logging, fs)
	fs.AddGoFlagSet(flag.CommandLine)
	_ = fs.Parse(os.Args[1:])
	if opts.kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "cert-manager-local: --kubeconfig is required")
		os.Exit(2)
	}

	logf.InitLogs()
	defer logf.FlushLogs()
	if err := logf.ValidateAndApply(opts.logging); err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager-local: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "cert-manager-local")
	if err := run(ctx, opts); err != nil {
		logf.FromContext(ctx).Error(err, "cert-manager-local failed")
		logf.FlushLogs()
		os.Exit(1)
	}
}

// run is upstream's app.Run without leader election and the HTTP servers.
func run(rootCtx context.Context, opts options) error {
	log := logf.FromContext(rootCtx)
	g, rootCtx := errgroup.WithContext(rootCtx)

	factory, err := controller.NewContextFactory(rootCtx, contextOptions(opts))
	if err != nil {
		return err
	}
	ctx, err := factory.Build()
	if err != nil {
		return err
	}
	log.Info("enabled controllers", "controllers", enabledControllers)

	for name, construct := range controller.Known() {
		if !slices.Contains(enabledControllers, name) {
			continue
		}
		iface, err := construct(factory)
		if err != nil {
			return fmt.Errorf("error starting controller %s: %w", name, err)
		}
		g.Go(func() error {
			log.V(logf.InfoLevel).Info("starting controller", "controller", name)
			return iface.Run(opts.workers, rootCtx)
		})
	}

	ctx.SharedInformerFactory.Start(rootCtx.Done())
	ctx.KubeSharedInformerFactory.Start(rootCtx.Done())
	ctx.HTTP01ResourceMetadataInformersFactory.Start(rootCtx.Done())

	if err := g.Wait(); err != nil {
		return fmt.Errorf("error running controllers: %w", err)
	}
	log.Info("control loops exited")
	ctx.HTTP01ResourceMetadataInformersFactory.Shutdown()
	ctx.KubeSharedInformerFactory.Shutdown()
	ctx.SharedInformerFactory.Shutdown()
	return nil
}

// contextOptions are upstream's defaults (internal/apis/config/controller/v1alpha1/defaults.go)
// for what the enabled controllers read.
func contextOptions(opts options) controller.ContextOptions {
	return controller.ContextOptions{
		Kubeconfig:         opts.kubeconfig,
		KubernetesAPIQPS:   opts.qps,
		KubernetesAPIBurst: opts.burst,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace:        opts.clusterResourceNamespace,
			ClusterIssuerAmbientCredentials: true,
			IssuerAmbientCredentials:        false,
		},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef:                           false,
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
		SchedulerOptions: controller.SchedulerOptions{MaxConcurrentChallenges: 60},
	}
}
