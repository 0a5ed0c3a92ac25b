package compact

import (
	"reflect"
	"unsafe"
)

// The set functions write a field only when the new value is another copy, so compacting an
// object twice writes nothing the second time (an object already shared with readers is not
// written to: a transform must be idempotent).

func setString[S ~string](field *S, v S) {
	if unsafe.StringData(string(*field)) != unsafe.StringData(string(v)) {
		*field = v
	}
}

func setMap[M ~map[K]V, K comparable, V any](field *M, v M) {
	if reflect.ValueOf(*field).UnsafePointer() != reflect.ValueOf(v).UnsafePointer() {
		*field = v
	}
}

func setSlice[S ~[]E, E any](field *S, v S) {
	if unsafe.SliceData(*field) != unsafe.SliceData(v) || cap(*field) != cap(v) {
		*field = v
	}
}

func setPointer[T any](field **T, v *T) {
	if *field != v {
		*field = v
	}
}
