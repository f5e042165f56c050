package api_test

import (
	"net"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func loopback() []*net.IPNet {
	_, n, _ := net.ParseCIDR("127.0.0.0/8")
	return []*net.IPNet{n}
}
