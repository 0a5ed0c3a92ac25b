// Package compact makes the volumes and claims the binder's informers hold smaller. A decoded
// PersistentVolume or PersistentVolumeClaim is ~2.6-2.9 KiB on the heap, most of it in parts that
// thousands of objects hold alike: label and annotation maps, capacities and requests (a small Go
// map is a group of eight slots, ~600 bytes for one Quantity), access modes, finalizers, class and
// mode pointers, the strings of claimRefs and phases. The informers' transform gives every object
// one shared copy of each such part instead of its own, and drops managedFields (as KCM does).
//
// Sharing is safe because objects in an informer's cache are read-only: every writer in the binder
// deep-copies an object before changing it (a DeepCopy copies shared parts too), which client-go's
// cache mutation detector checks in the torture and e2e runs. Shared slices are clipped, so an
// append through one object never writes into another's. Parts are shared only when equal to the
// last bit (reflect.DeepEqual for quantities, which keep their own representation), so an object
// the binder writes back sends exactly what it read. Each table of shared parts (strings included)
// holds at most maxShared distinct values and starts over when full, so objects that are all
// different cost a bounded table, not a leak, and cannot keep later objects from sharing.
package compact
