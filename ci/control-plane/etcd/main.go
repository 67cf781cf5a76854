// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3/etcdmain), built at the
// version kube-apiserver's client names, for the control plane the real_cluster tests run.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
