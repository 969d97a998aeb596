//go:build !unix

package archive

const noFollow = 0
