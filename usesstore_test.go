package messaging_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestUsesStore: true only for the very store value given to New;
// another store of the type, a wrapper of it, nil, and a store of a type
// that == cannot compare (without panicking) are false.
func TestUsesStore(t *testing.T) {
	type wrapper struct{ driver.Store }
	type uncomparable struct {
		driver.Store
		tags []string
	}
	st := memstore.New()
	odd := uncomparable{Store: st}
	for _, c := range []struct {
		name  string
		on, x driver.Store
		want  bool
	}{
		{"the same store", st, st, true},
		{"another store", st, memstore.New(), false},
		{"a wrapper", st, wrapper{st}, false},
		{"the wrapped store", wrapper{st}, st, false},
		{"nil", st, nil, false},
		{"a store == cannot compare", odd, odd, false},
	} {
		svc, err := messaging.New(c.on, fakeprovider.New(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := svc.UsesStore(c.x); got != c.want {
			t.Errorf("%s: UsesStore = %v, want %v", c.name, got, c.want)
		}
	}
}

// pingStore is a store whose Ping answers err.
type pingStore struct {
	driver.Store
	err error
}

func (s pingStore) Ping(context.Context) error { return s.err }

// TestPing: Service.Ping answers what its store's Ping answers,
// unchanged, so that errors.Is finds ErrSchemaVersion.
func TestPing(t *testing.T) {
	for _, want := range []error{nil, fmt.Errorf("pgstore: %w", driver.ErrSchemaVersion)} {
		svc, err := messaging.New(pingStore{memstore.New(), want}, fakeprovider.New(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := svc.Ping(context.Background()); got != want {
			t.Errorf("Ping = %v, want %v", got, want)
		}
		if want != nil && !errors.Is(svc.Ping(context.Background()), driver.ErrSchemaVersion) {
			t.Error("Ping's error does not wrap ErrSchemaVersion")
		}
	}
}
