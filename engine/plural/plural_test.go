package plural

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 records"}, {1, "1 record"}, {2, "2 records"}, {-1, "-1 records"}} {
		if got := Of(c.n, "record"); got != c.want {
			t.Errorf("Of(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := string(Append([]byte("leader 0 appended "), int32(1), "record")); got != "leader 0 appended 1 record" {
		t.Errorf("Append: %q", got)
	}
}
