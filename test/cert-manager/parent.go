package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// The controller exits when the process that started it dies, even by SIGKILL, so a
// crashed test run leaves nothing behind (as kube-local's components do, test/cluster/parent.go).
func init() {
	if os.Getenv("KUBE_LOCAL_EXIT_WITH_PARENT") != "1" {
		return
	}
	runtime.LockOSThread() // pdeathsig is tied to the thread that set it
	parent := os.Getppid()
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	runtime.UnlockOSThread()
	go func() {
		for range time.Tick(time.Second) {
			if os.Getppid() != parent {
				_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
				time.Sleep(10 * time.Second)
				os.Exit(1)
			}
		}
	}()
}
