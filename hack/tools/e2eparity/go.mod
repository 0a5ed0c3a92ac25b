module github.com/fastpv/pv-controller-manager/hack/tools/e2eparity

go 1.26.0
