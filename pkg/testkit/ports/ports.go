// Package ports gives tests local addresses that stay what the test needs while it runs. A port found
// free by listening and letting go can be taken by another test's server before it is used: a client
// the test points at "nothing" then reaches that server.
package ports

import (
	"fmt"
	"syscall"
	"testing"
)

// Refusing is an address on 127.0.0.1 where connections are refused until the test ends: its port is held
// by a socket bound there without listening, and without SO_REUSEADDR, so no other process can listen on
// it meanwhile.
func Refusing(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
