module github.com/fastpv/pv-controller-manager/hack/cmd/docscheck

go 1.26.0
