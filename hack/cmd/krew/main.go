// Command krew-manifest writes the krew Plugin manifest of kubectl pvc-why (pvc-why.yaml) from a
// release's SHA256SUMS: one platform per kubectl-pvc_why_<version>_<os>_<arch>.tar.gz archive in
// it, its sha256, and its URI under --uri-base. make dist runs it on the archives it built; make
// verify runs it on testdata/ and validates both with krew's own validate-krew-manifest (the tool
// of this module's go.mod, at the pinned krew version).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/krew/pkg/index"
	"sigs.k8s.io/yaml"
)

func main() {
	sums := flag.String("sums", "", "the release's SHA256SUMS file")
	version := flag.String("version", "", "the release's version, semver with a leading v (v0.3.0)")
	uriBase := flag.String("uri-base", "https://github.com/fastpv/pv-controller-manager/releases/download", "archives are at URI-BASE/VERSION/ARCHIVE")
	out := flag.String("out", "pvc-why.yaml", "manifest to write (krew names the plugin after the file)")
	flag.Parse()
	if *sums == "" || *version == "" {
		fmt.Fprintln(os.Stderr, "krew-manifest: --sums and --version are required")
		os.Exit(2)
	}
	f, err := os.Open(*sums)
	if err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest:", err)
		os.Exit(1)
	}
	defer f.Close()
	plugin, err := manifest(f, *version, *uriBase)
	if err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest:", err)
		os.Exit(1)
	}
	data, err := yaml.Marshal(plugin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest:", err)
		os.Exit(1)
	}
}

var archiveName = regexp.MustCompile(`^kubectl-pvc_why_(v[^_]+)_(linux|darwin)_(amd64|arm64)\.tar\.gz$`)

// manifest builds the Plugin from the lines of SHA256SUMS ("<sha256>  <file>").
func manifest(sums io.Reader, version, uriBase string) (*index.Plugin, error) {
	plugin := &index.Plugin{
		TypeMeta:   metav1.TypeMeta{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin"},
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-why"},
		Spec: index.PluginSpec{
			Version:          version,
			Homepage:         "https://github.com/fastpv/pv-controller-manager/blob/main/docs/operators/pvc-why.md",
			ShortDescription: "Explain why a PersistentVolumeClaim is not Bound",
			Description: "Says, for one claim or every claim of a namespace, what the PersistentVolume binder\n" +
				"would do with it now and why it has not: the volume it would bind, every reason each\n" +
				"candidate volume does not fit, the provisioner or scheduler it waits for, a lost volume.\n" +
				"It asks the binder's own matching code (pv-controller-manager's, upstream's plus patches)\n" +
				"and only lists objects. Works offline on a dump (kubectl get ... -o yaml).",
		},
	}
	scanner := bufio.NewScanner(sums)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) != 2 {
			continue
		}
		sum, file := fields[0], strings.TrimPrefix(fields[1], "*")
		m := archiveName.FindStringSubmatch(file)
		if m == nil {
			continue
		}
		if m[1] != version {
			return nil, fmt.Errorf("%s is of version %s, not %s", file, m[1], version)
		}
		plugin.Spec.Platforms = append(plugin.Spec.Platforms, index.Platform{
			URI:      fmt.Sprintf("%s/%s/%s", strings.TrimSuffix(uriBase, "/"), version, file),
			Sha256:   sum,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": m[2], "arch": m[3]}},
			Files:    []index.FileOperation{{From: "kubectl-pvc_why", To: "."}, {From: "LICENSE", To: "."}},
			Bin:      "kubectl-pvc_why",
		})
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if len(plugin.Spec.Platforms) == 0 {
		return nil, fmt.Errorf("no kubectl-pvc_why_%s_<os>_<arch>.tar.gz archive in the sums", version)
	}
	sort.Slice(plugin.Spec.Platforms, func(i, j int) bool { return plugin.Spec.Platforms[i].URI < plugin.Spec.Platforms[j].URI })
	return plugin, nil
}
