//go:build !windows

package supervisor

const exeSuffix = ""
