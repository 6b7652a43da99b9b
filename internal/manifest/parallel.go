package manifest

import (
	"runtime"
	"sync"
)

// minParallel is the number of documents below which they are processed on one goroutine.
const minParallel = 64

// parallel calls fn for 0..n-1, spread over the processors in contiguous chunks of at least minParallel
// calls, and returns the error of the lowest index that failed.
func parallel(n int, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n/minParallel)
	if workers <= 1 {
		for i := range n {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, workers)
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * chunk; i < min(n, (w+1)*chunk); i++ {
				if err := fn(i); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
