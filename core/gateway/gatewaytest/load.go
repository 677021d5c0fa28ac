package gatewaytest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// Load makes n allowed decisions through gws from clients concurrent
// clients (client i uses gateway i mod len(gws)), each a distinct small
// payment under the mandate tok, and returns every decision's latency (in
// no particular order). next numbers the proposals, so that calls sharing it
// never repeat one. A decision that is not Allow, or an error, ends the load
// with an error.
func Load(ctx context.Context, gws []*gateway.Gateway, tok string, clients, n int, next *atomic.Int64) ([]time.Duration, error) {
	lat := make([]time.Duration, n)
	var done atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for c := range clients {
		gw := gws[c%len(gws)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := done.Add(1) - 1
				if i >= int64(n) {
					return
				}
				k := next.Add(1)
				body := Send(Recipients[k%int64(len(Recipients))], fmt.Sprintf("%d.%02d", 1+k%50, k%100), fmt.Sprintf("load %d", k))
				start := time.Now()
				d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body})
				lat[i] = time.Since(start)
				if err == nil && d.Verdict != intent.Allow {
					err = fmt.Errorf("decision %d: %s %+v", k, d.Verdict, d.Refusal)
				}
				if err != nil {
					once.Do(func() { first = err })
					done.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return lat, first
}

// Percentile returns the p-th percentile (0 < p <= 100) of ds, sorting ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds))*p/100+0.5) - 1
	return ds[max(0, min(i, len(ds)-1))]
}
