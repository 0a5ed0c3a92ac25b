package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestMisplacedFlag(t *testing.T) {
	cases := []struct {
		action  string
		args    []string
		wantErr string
	}{
		{action: "status", args: []string{"--canary-namespace", "ns"}},
		{action: "uninstall", args: []string{"--cluster"}},
		{action: "enable", args: []string{"--cluster"}, wantErr: "--cluster is a flag of uninstall, not of enable"},
		{action: "disable", args: []string{"--canary-namespace", "ns"}, wantErr: "--canary-namespace is a flag of status"},
		{action: "status", args: []string{"--cluster=false"}, wantErr: "--cluster is a flag of uninstall"},
		{action: "enable", args: []string{"--wait-timeout", "1m"}},
	}
	for _, tc := range cases {
		fs := flag.NewFlagSet("pv-rollout", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("canary-namespace", "", "")
		fs.Duration("canary-timeout", 0, "")
		fs.Bool("cluster", false, "")
		fs.Duration("wait-timeout", 0, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := misplacedFlag(fs, tc.action)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s %v: %v, want %q", tc.action, tc.args, err, tc.wantErr)
		}
	}
}
