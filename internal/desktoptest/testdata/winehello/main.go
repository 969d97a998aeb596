// Winehello prints the operating system it was built for and a random
// number, proving that a Go Windows binary starts under Wine (Go's runtime
// seeds itself through ProcessPrng, which the harness's shim provides).
package main

import (
	"crypto/rand"
	"fmt"
	"runtime"
)

func main() {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	fmt.Printf("hello from %s %x\n", runtime.GOOS, b)
}
