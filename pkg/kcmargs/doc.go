// Package kcmargs reads kube-controller-manager command lines: which controllers --controllers
// enables, and whether the PersistentVolume binder is among them. The rollout tool and the
// upstream-binder guard both decide with it, using KCM's own rule.
package kcmargs
