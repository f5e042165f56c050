package main

import "syscall"

// procAttr makes the server die with this program, whatever ends it.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
