package main

// The node simulator stands in for kubelets (no containers can run here): it
// registers Ready nodes and plays the kubelet's part in every pod's life cycle,
// and a minimal volume provisioner so that claims bind.

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

const simLabel = "kube-local.preview-operator.dev/simulated"

type nodeSim struct {
	client kubernetes.Interface
	nodes  map[string]bool
	pods   cache.Indexer
	claims cache.Indexer
	vols   cache.Indexer
	queue  workqueue.TypedRateLimitingInterface[string]

	mu     sync.Mutex
	nextIP uint32
	ipBase uint32
}

func runNodeSim(args []string) int {
	fs := flag.NewFlagSet("node-sim", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of an identity allowed to manage nodes, pods and volumes (required)")
	count := fs.Int("nodes", 1, "number of simulated nodes")
	cpu := fs.String("cpu", "64", "CPU capacity per node")
	memory := fs.String("memory", "256Gi", "memory capacity per node")
	maxPods := fs.String("pods", "500", "pod capacity per node")
	gpus := fs.String("gpus", "16", "nvidia.com/gpu capacity per node")
	podCIDR := fs.String("pod-cidr", "10.244.0.0/16", "range pod IPs are taken from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "node-sim: --kubeconfig is required")
		return 2
	}
	_, cidr, err := net.ParseCIDR(*podCIDR)
	if err != nil || cidr.IP.To4() == nil {
		fmt.Fprintf(os.Stderr, "node-sim: --pod-cidr must be an IPv4 CIDR: %v\n", err)
		return 2
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "node-sim: %v\n", err)
		return 1
	}
	cfg.QPS, cfg.Burst = 200, 400
	client := kubernetes.NewForConfigOrDie(cfg)

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()

	capacity := corev1.ResourceList{}
	for name, value := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *memory, corev1.ResourcePods: *maxPods,
		"nvidia.com/gpu": *gpus, corev1.ResourceEphemeralStorage: "1Ti",
	} {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			fmt.Fprintf(os.Stderr, "node-sim: capacity %s=%q: %v\n", name, value, err)
			return 2
		}
		capacity[name] = q
	}

	s := &nodeSim{
		client: client,
		nodes:  map[string]bool{},
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		ipBase: binary.BigEndian.Uint32(cidr.IP.To4()),
		nextIP: 2,
	}
	for i := 0; i < *count; i++ {
		name := fmt.Sprintf("sim-node-%d", i)
		s.nodes[name] = true
		if err := s.registerNode(ctx, name, capacity); err != nil {
			fmt.Fprintf(os.Stderr, "node-sim: register %s: %v\n", name, err)
			return 1
		}
	}

	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	claimInformer := factory.Core().V1().PersistentVolumeClaims().Informer()
	volInformer := factory.Core().V1().PersistentVolumes().Informer()
	s.pods, s.claims, s.vols = podInformer.GetIndexer(), claimInformer.GetIndexer(), volInformer.GetIndexer()
	enqueue := func(kind string) cache.ResourceEventHandlerFuncs {
		add := func(obj interface{}) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				s.queue.Add(kind + "|" + key)
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, obj interface{}) { add(obj) }}
	}
	podInformer.AddEventHandler(enqueue("pod"))
	claimInformer.AddEventHandler(enqueue("pvc"))
	volInformer.AddEventHandler(enqueue("pv"))
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	fmt.Fprintf(os.Stderr, "node-sim ready with %d node(s)\n", *count)

	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s.processNext(ctx) {
			}
		}()
	}
	go s.heartbeat(ctx)
	<-ctx.Done()
	s.queue.ShutDown()
	wg.Wait()
	return 0
}

func (s *nodeSim) registerNode(ctx context.Context, name string, capacity corev1.ResourceList) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"node-role.kubernetes.io/worker": "", simLabel: "true",
		}},
	}
	created, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	// The TaintNodesByCondition admission plugin adds not-ready; no node-lifecycle
	// controller runs to lift it, so the simulator does.
	var taints []corev1.Taint
	for _, t := range created.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady && t.Key != corev1.TaintNodeUnreachable {
			taints = append(taints, t)
		}
	}
	if len(taints) != len(created.Spec.Taints) {
		created.Spec.Taints = taints
		if created, err = s.client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	now := metav1.Now()
	created.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "simulated", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastHeartbeatTime: now, LastTransitionTime: now},
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: "v1.37.2-sim", OperatingSystem: "linux", Architecture: "amd64",
			ContainerRuntimeVersion: "simulated://1.0",
		},
	}
	_, err = s.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// heartbeat keeps the node Lease fresh so that anything watching node health sees a live node.
func (s *nodeSim) heartbeat(ctx context.Context) {
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			for name := range s.nodes {
				node, err := s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					continue
				}
				for i := range node.Status.Conditions {
					node.Status.Conditions[i].LastHeartbeatTime = metav1.Now()
				}
				_, _ = s.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
			}
		}
	}
}

func (s *nodeSim) processNext(ctx context.Context) bool {
	item, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(item)
	kind, key, _ := strings.Cut(item, "|")
	var err error
	switch kind {
	case "pod":
		err = s.syncPod(ctx, key)
	case "pvc":
		err = s.syncClaim(ctx, key)
	case "pv":
		err = s.syncVolume(ctx, key)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		if !apierrors.IsConflict(err) {
			fmt.Fprintf(os.Stderr, "node-sim: %s %s: %v\n", kind, key, err)
		}
		s.queue.AddRateLimited(item)
		return true
	}
	s.queue.Forget(item)
	return true
}

func (s *nodeSim) allocateIP() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, s.ipBase+s.nextIP)
	s.nextIP++
	return ip.String()
}

func (s *nodeSim) syncPod(ctx context.Context, key string) error {
	obj, exists, err := s.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	if !s.nodes[pod.Spec.NodeName] {
		return nil
	}
	// Without a kubelet nothing would ever finish a graceful deletion.
	if pod.DeletionTimestamp != nil {
		zero := int64(0)
		return s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID},
		})
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	runsToCompletion := pod.Spec.RestartPolicy != corev1.RestartPolicyAlways
	if pod.Status.Phase == corev1.PodRunning && !runsToCompletion {
		return nil
	}
	desired := pod.DeepCopy()
	now := metav1.Now()
	if desired.Status.StartTime == nil {
		desired.Status.StartTime = &now
	}
	desired.Status.HostIP = "127.0.0.1"
	desired.Status.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
	if desired.Status.PodIP == "" && !pod.Spec.HostNetwork {
		ip := s.allocateIP()
		desired.Status.PodIP = ip
		desired.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	desired.Status.InitContainerStatuses = containerStatuses(pod.Spec.InitContainers, true, now)
	if runsToCompletion {
		desired.Status.Phase = corev1.PodSucceeded
		desired.Status.ContainerStatuses = containerStatuses(pod.Spec.Containers, true, now)
		desired.Status.Conditions = podConditions(corev1.ConditionFalse, now, "PodCompleted")
	} else {
		desired.Status.Phase = corev1.PodRunning
		desired.Status.ContainerStatuses = containerStatuses(pod.Spec.Containers, false, now)
		desired.Status.Conditions = podConditions(corev1.ConditionTrue, now, "")
	}
	_, err = s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, desired, metav1.UpdateOptions{})
	return err
}

func containerStatuses(containers []corev1.Container, terminated bool, now metav1.Time) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range containers {
		st := corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "sim://" + c.Image,
			ContainerID: "sim://" + c.Name, Ready: !terminated, Started: boolPtr(!terminated),
		}
		if terminated {
			st.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}
		} else {
			st.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		}
		out = append(out, st)
	}
	return out
}

func podConditions(ready corev1.ConditionStatus, now metav1.Time, reason string) []corev1.PodCondition {
	cond := func(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now}
		if s == corev1.ConditionFalse {
			c.Reason = reason
		}
		return c
	}
	return []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue),
		cond(corev1.PodInitialized, corev1.ConditionTrue),
		cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue),
		cond(corev1.ContainersReady, ready),
		cond(corev1.PodReady, ready),
	}
}

func boolPtr(b bool) *bool { return &b }

// syncClaim provisions a volume for a pending claim; the persistent-volume
// binder controller then binds the two.
func (s *nodeSim) syncClaim(ctx context.Context, key string) error {
	obj, exists, err := s.claims.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil {
		return nil
	}
	name := "pv-" + string(pvc.UID)
	if _, exists, _ := s.vols.GetByKey(name); exists {
		return nil
	}
	size, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		size = resource.MustParse("1Gi")
	}
	className := ""
	if pvc.Spec.StorageClassName != nil {
		className = *pvc.Spec.StorageClassName
	}
	modes := pvc.Spec.AccessModes
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{simLabel: "true"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   modes,
			VolumeMode:                    pvc.Spec.VolumeMode,
			StorageClassName:              className,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/kube-local/volumes/" + name},
			},
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID,
			},
		},
	}
	_, err = s.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// syncVolume deletes simulated volumes whose claim is gone (a Retain policy
// with nobody to reclaim would otherwise leave them forever).
func (s *nodeSim) syncVolume(ctx context.Context, key string) error {
	obj, exists, err := s.vols.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pv := obj.(*corev1.PersistentVolume)
	if pv.Labels[simLabel] != "true" || pv.Status.Phase != corev1.VolumeReleased || pv.DeletionTimestamp != nil {
		return nil
	}
	uid := pv.UID
	err = s.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

var _ = types.UID("")
