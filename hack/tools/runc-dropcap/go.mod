module github.com/fastpv/pv-controller-manager/hack/tools/runc-dropcap

go 1.26.0
