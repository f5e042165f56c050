//go:build !race

package useragent

const raceEnabled = false
