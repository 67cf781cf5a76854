//go:build tools

// Package tools pins the commands ci/install-control-plane.sh builds from this module:
// kube-apiserver, kube-controller-manager and kube-scheduler. Never compiled itself (the build tag); it keeps them in go.mod and go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
