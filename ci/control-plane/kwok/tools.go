//go:build tools

// Package tools pins the commands ci/install-control-plane.sh builds from this module:
// kwok (the fake nodes) and kwokctl (which starts a control plane from local binaries). Never compiled itself (the build tag); it keeps them in go.mod and go.sum.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
