//go:build race

package supervisor_test

// raceEnabled: under `go test -race` the e2e tests build the deskhand
// binary they drive with -race too, so a data race in the server, not only
// in the test process, fails the run.
const raceEnabled = true
