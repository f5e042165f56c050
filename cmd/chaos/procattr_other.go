//go:build !linux

package main

import "syscall"

// procAttr: only Linux can tie the server's life to this program's; elsewhere the deferred stop ends it.
func procAttr() *syscall.SysProcAttr { return nil }
