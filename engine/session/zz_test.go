package session

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestZZMillionSession(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	s := New(Limits{MaxBrokers: 1000, MaxPartitions: 1_000_000})
	sc := `{"name":"m","brokers":1000,"topics":[{"name":"t","partitions":1000000,"replicationFactor":3}]}`
	vo := `"view":{"detailLimit":64,"maxMessages":300,"delta":true}`
	t0 := time.Now()
	r := s.HandleJSON([]byte(`{"id":1,"op":"load","scenario":` + sc + `,` + vo + `}`))
	t1 := time.Now()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("load %v, reply %d bytes, heap %d MB", t1.Sub(t0), len(r), ms.HeapAlloc>>20)
	adv := func(id int) {
		t2 := time.Now()
		r = s.HandleJSON([]byte(fmt.Sprintf(`{"id":%d,"op":"advance","by":1000,%s}`, id, vo)))
		t.Logf("advance 1 s: %v, reply %d bytes", time.Since(t2), len(r))
	}
	for i := 2; i < 6; i++ {
		adv(i)
	}
	t2 := time.Now()
	r = s.HandleJSON([]byte(`{"id":9,"op":"apply","action":{"do":"kill","broker":7},` + vo + `}`))
	t.Logf("kill: %v, reply %d bytes", time.Since(t2), len(r))
	for i := 10; i < 35; i++ {
		adv(i)
	}
	t.Logf("%s", string(r[:min(len(r), 600)]))
}
