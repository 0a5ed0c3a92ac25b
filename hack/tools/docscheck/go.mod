module github.com/fastpv/pv-controller-manager/hack/tools/docscheck

go 1.26.0
