package kcmargs

import (
	"slices"
	"testing"
)

func TestBinderEnabled(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    bool
		present bool
	}{
		{name: "no flag runs everything", args: []string{"--kubeconfig=/x"}, want: true},
		{name: "star", args: []string{"--controllers=*"}, want: true, present: true},
		{name: "kubeadm default", args: []string{"--controllers=*,bootstrapsigner,tokencleaner"}, want: true, present: true},
		{name: "disabled", args: []string{"--controllers=*,-persistentvolume-binder-controller"}, present: true},
		{name: "disabled by alias", args: []string{"--controllers=*,-persistentvolume-binder"}, present: true},
		{name: "explicit list without the binder", args: []string{"--controllers=bootstrapsigner,tokencleaner"}, present: true},
		{name: "explicit list with the alias", args: []string{"--controllers=persistentvolume-binder"}, want: true, present: true},
		{name: "first explicit entry wins", args: []string{"--controllers=persistentvolume-binder-controller,-persistentvolume-binder-controller"}, want: true, present: true},
		{name: "separate value", args: []string{"--controllers", "*,-persistentvolume-binder-controller"}, present: true},
		{name: "repeated flags append", args: []string{"--controllers=*", "--controllers=-persistentvolume-binder"}, present: true},
		{name: "single dash", args: []string{"-controllers=*,-persistentvolume-binder"}, present: true},
		{name: "after --", args: []string{"--", "--controllers=-persistentvolume-binder"}, want: true},
		{name: "other flag with the same prefix", args: []string{"--controllers-extra=-persistentvolume-binder"}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := BinderEnabled(tc.args); got != tc.want {
				t.Errorf("BinderEnabled(%q) = %v, want %v", tc.args, got, tc.want)
			}
			if _, present := Controllers(tc.args); present != tc.present {
				t.Errorf("Controllers(%q) present = %v, want %v", tc.args, present, tc.present)
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	if got, want := SplitList(" *, ,-a,b "), []string{"*", "-a", "b"}; !slices.Equal(got, want) {
		t.Errorf("SplitList = %q, want %q", got, want)
	}
}
