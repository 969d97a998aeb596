//go:build unix

package supervisor_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/internal/speedups"
)

// TestBenchSpeedups measures what each speed-up (internal/speedups) saves:
// the same screenshots and clicks on servers with one speed-up off,
// against servers with all on, in rounds that alternate the order, so a
// busy spell of the machine lands on both sides. Each row is the median
// with the speed-up off minus the median with it on; the noise rows are
// how far the all-on medians of the rounds lie apart, the floor under
// which a saving is not a saving. It runs only under `make bench`.
func TestBenchSpeedups(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	d := newDesktop(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	putScene(t, d, 40, 60)

	configs := []string{"", speedups.Splice, "damage", speedups.Drawn}
	ops := []string{"screenshot", "left_click"}
	samples := map[string]map[string][]time.Duration{} // config -> op -> round medians
	spot := func(i int) []int { return []int{100 + i%200, 700 + i%50} }
	const rounds = 3
	for round := range rounds {
		for k := range configs {
			// Rotate the order each round.
			config := configs[(k+round)%len(configs)]
			t.Setenv(speedups.Env, config)
			e := serve(t, d, "--log-level", "warn", "--no-effect")
			for range 5 {
				e.benchCall("screenshot", nil)
			}
			if samples[config] == nil {
				samples[config] = map[string][]time.Duration{}
			}
			samples[config]["screenshot"] = append(samples[config]["screenshot"],
				timeIt(30, func(int) { e.benchCall("screenshot", nil) }))
			e.benchCall("screenshot", nil)
			samples[config]["left_click"] = append(samples[config]["left_click"],
				timeIt(60, func(i int) { e.benchCall("left_click", map[string]any{"coordinate": spot(i)}) }))
			e.cs.Close()
		}
	}
	for _, op := range ops {
		on := samples[""][op]
		spread := slices.Max(on) - slices.Min(on)
		report("speedup_noise_"+op+"_ms", ms(spread), "ms")
		for _, config := range configs[1:] {
			saved := median(samples[config][op]) - median(on)
			report("speedup_"+config+"_saves_"+op+"_ms", ms(saved), "ms")
		}
	}
}
