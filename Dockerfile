# For users who build with a container engine. Equivalent to `make image` (hack/cmd/image), which
# builds the same image without an engine: FROM scratch, the static binaries (the binder and the
# kubectl plugin kubectl-pvc_why), uid 65532.
#   docker build --build-arg VERSION=$(git describe --tags --always) -t pv-controller-manager:dev .
# It builds the default Kubernetes release (releases/DEFAULT); for another one use
# `make image KUBE_VERSION=v1.35.4` (docs/maintainers/patches-and-releases.md).
FROM golang:1.26.8 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=unknown
RUN GOWORK=off CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/fastpv/pv-controller-manager/pkg/version.Version=${VERSION} -X github.com/fastpv/pv-controller-manager/pkg/version.Upstream=$(tr -d '[:space:]' < releases/$(tr -d '[:space:]' < releases/DEFAULT)/UPSTREAM) -X github.com/fastpv/pv-controller-manager/pkg/version.GitCommit=${REVISION}" \
      -o /out/usr/local/bin/pv-controller-manager ./cmd/pv-controller-manager && \
    GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/usr/local/bin/kubectl-pvc_why ./cmd/kubectl-pvc_why && \
    mkdir -p /out/etc /out/tmp && chmod 1777 /out/tmp && \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /out/etc/passwd && \
    printf 'root:x:0:\nnonroot:x:65532:\n' > /out/etc/group

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="pv-controller-manager" \
      org.opencontainers.image.source="https://github.com/fastpv/pv-controller-manager" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/ /
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pv-controller-manager"]
