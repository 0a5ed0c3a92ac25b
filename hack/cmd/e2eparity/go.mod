module github.com/fastpv/pv-controller-manager/hack/cmd/e2eparity

go 1.26.0
