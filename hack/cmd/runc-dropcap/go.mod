module github.com/fastpv/pv-controller-manager/hack/cmd/runc-dropcap

go 1.26.0
