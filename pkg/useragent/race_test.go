//go:build race

package useragent

// raceEnabled: the race detector slows crawlerdetect's regular expressions some fifty times.
const raceEnabled = true
